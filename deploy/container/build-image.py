#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds numaprobe's container image from its .deb, or from one .deb per
architecture as one multi-architecture image (an OCI image index):

    deploy/container/build-image.py build/release/package/numaprobe_<version>_amd64.deb
    deploy/container/build-image.py numaprobe_<version>_amd64.deb numaprobe_<version>_arm64.deb

The image holds the package's files and the shared libraries they need, on an
empty base (`FROM scratch`): no shell, no package manager, no libc tools. It is
tagged numaprobe:<version> in semver's spelling (0.2.0~dev.5 -> 0.2.0-dev.5:
tags cannot hold "~"); with several .debs each architecture's image is also
tagged numaprobe:<tag>-<arch> and numaprobe:<tag> is the index of them.

1. Download the packages in the .deb's Depends, and what those depend on,
   from the Debian archive (mmdebstrap --variant=extract, no chroot is set up).
2. Unpack them and the .deb into a scratch tree, /lib and /bin folded into
   /usr (merged-usr, as in Debian 12 images).
3. Keep the .deb's program files (not its documentation or the configuration
   templates; /etc/numaprobe/numaprobe.yaml is made from the template) and,
   starting from every ELF file among them, the libraries they load
   (DT_NEEDED, the program interpreter, symlinks followed), and the copyright
   file of every package something was kept from. Plus coreutils' `install`,
   which the Kubernetes init container runs to hand the hostPath state
   directory to 65534 (deploy/kubernetes/daemonset.yaml), with its libraries.
4. Add /etc/passwd and /etc/group (root, nobody), the state directory
   (65534:65534, 0700) and /run/lock (1777) for probe_lock_file; a
   /var/lib/dpkg/status.d entry per Debian package something was kept from
   (the convention of distroless images, which image scanners read); and the
   SBOM (below) as /usr/share/doc/numaprobe/sbom.spdx.json. All written as
   rootfs.tar, every file owned by root.
5. Build Containerfile (beside this script) over rootfs.tar with podman,
   docker or buildah: the image's settings and OCI labels (version, revision,
   source, licenses), and `check-config` run in the new image, which fails the
   build if a library is missing. For another architecture that needs the
   host to run its programs (binfmt_misc with qemu-user-static); without, the
   step is left out and the build says so.

The SBOM (SPDX 2.3, JSON): the image, numaprobe and every Debian package in
it, and the source packages linked statically into numaprobe (the .deb's
Static-Built-Using), related as CONTAINS and STATIC_LINK. Generated here rather
than by a scanner because no scanner sees libraries linked into a C++ binary:
only the build knows them. --sbom FILE writes a copy.

Libraries a program opens with dlopen(3) by name are not found by step 3
unless they are in the .deb or linked by something that is (numaprobe
opens none). Needs python3, mmdebstrap, readelf (binutils), dpkg-deb
and one of the engines; root, or mmdebstrap's unshare mode (subuids).
"""
import argparse
import email.utils
import gzip
import hashlib
import io
import json
import os
import pathlib
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid

HERE = pathlib.Path(__file__).resolve().parent
SUITE = "bookworm"
MIRRORS = (
    "deb http://deb.debian.org/debian bookworm main",
    "deb http://deb.debian.org/debian bookworm-updates main",
    "deb http://deb.debian.org/debian-security bookworm-security main",
)
MULTIARCH = {"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}
# Debian architecture -> the kernel's machine name (binfmt_misc's qemu-<name>).
MACHINE = {"amd64": "x86_64", "arm64": "aarch64"}
# Directories that merged-usr folds into /usr; the image keeps them as symlinks.
MERGED = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# What the init container runs: (package, path in the image).
TOOLS = (("coreutils", "usr/bin/install"),)
STATE_DIR = "var/lib/numaprobe"  # state_directory in config/numaprobe.yaml
LOCK_DIR = "run/lock"  # the directory of probe_lock_file
NOBODY = 65534
PASSWD = "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
GROUP = "root:x:0:\nnogroup:x:65534:\n"
CONFIG_TEMPLATE = "usr/share/numaprobe/numaprobe.yaml"  # the .deb's; postinst copies it to /etc
CONFIG = "etc/numaprobe/numaprobe.yaml"
SBOM = "usr/share/doc/numaprobe/sbom.spdx.json"


def log(message):
    print(f"build-image: {message}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"build-image: `{' '.join(map(str, cmd))}` exited {p.returncode}:\n"
                         f"{(p.stderr or p.stdout)[-3000:]}")
    return p.stdout


def deb_field(deb, name):
    return run(["dpkg-deb", "-f", deb, name]).strip()


def depends(deb):
    """Package names in Depends (the first of each set of alternatives)."""
    names = []
    for dep in deb_field(deb, "Depends").split(","):
        first = dep.split("|")[0].strip()
        if first:
            names.append(first.split()[0].split(":")[0])
    return names


def download(packages, arch, dest):
    """The .deb files of `packages` and everything they depend on."""
    dest.mkdir(parents=True, exist_ok=True)
    # The extract variant downloads with apt (resolving dependencies) and
    # unpacks without running anything; the hook copies the downloads out
    # before mmdebstrap deletes them with its temporary tree.
    run(["mmdebstrap", "--variant=extract", "--format=null", f"--architectures={arch}",
         "--include=" + ",".join(packages),
         f"--extract-hook=cp \"$1\"/var/cache/apt/archives/*.deb {shlex.quote(str(dest))}/",
         SUITE, "/dev/null", *MIRRORS], timeout=1800)
    debs = sorted(dest.glob("*.deb"))
    if not debs:
        raise SystemExit("build-image: mmdebstrap downloaded no packages")
    return debs


def merged(path):
    """A path from a package or a symlink (./lib/x, /bin/y, usr/z) relative to
    the root, and as it is on a merged-usr system (usr/lib/x, usr/bin/y)."""
    path = posixpath.normpath(path.removeprefix("./").lstrip("/"))
    head = path.split("/", 1)[0]
    return "usr/" + path if head in MERGED else path


class Tree:
    """Packages unpacked into one directory, remembering which package each
    path came from."""

    def __init__(self, root):
        self.root = pathlib.Path(root)
        self.owner = {}
        self.control = {}  # package -> its control paragraph (dpkg-deb -f)

    def unpack(self, deb):
        package = deb_field(deb, "Package")
        self.control[package] = run(["dpkg-deb", "-f", deb]).rstrip("\n")
        proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            for member in tar:
                rel = merged(member.name)
                if rel == ".":
                    continue
                target = self.root / rel
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.is_symlink() or target.exists():
                    target.unlink()
                if member.issym():
                    os.symlink(member.linkname, target)
                elif member.islnk():
                    shutil.copy2(self.root / merged(member.linkname), target)
                elif member.isfile():
                    with open(target, "wb") as f:
                        shutil.copyfileobj(tar.extractfile(member), f)
                    os.chmod(target, member.mode & 0o7777)
                else:
                    continue  # device nodes and fifos: none in library packages
                self.owner[rel] = package
        if proc.wait() != 0:
            raise SystemExit(f"build-image: dpkg-deb --fsys-tarfile {deb} failed")
        return package

    def resolve(self, rel):
        """Every path `rel` goes through (symlinks, in any component) and the
        file it ends at, all relative to the tree; None if it does not exist."""
        seen, parts, done = [], rel.split("/"), ""
        for hops in range(40):
            if not parts:
                return seen + [done]
            step = posixpath.join(done, parts.pop(0)) if done else parts.pop(0)
            path = self.root / step
            if path.is_symlink():
                seen.append(step)
                link = os.readlink(path)
                base = "" if link.startswith("/") else posixpath.dirname(step)
                parts = merged(posixpath.join(base, link)).split("/") + parts
                done = ""
            elif path.exists():
                done = step
            else:
                return None
        raise SystemExit(f"build-image: too many symlinks resolving {rel}")


def elf_links(path):
    """(interpreter or None, [DT_NEEDED names]) of an ELF file."""
    out = run(["readelf", "-d", "-l", "-W", path])
    interp, needed = None, []
    for line in out.splitlines():
        if "Requesting program interpreter:" in line:
            interp = line.split(":", 1)[1].strip(" ]")
        elif "(NEEDED)" in line:
            needed.append(line.rsplit("[", 1)[1].rstrip("]"))
    return interp, needed


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def select(tree, roots, libdirs):
    """Paths to keep: `roots`, the libraries they load, recursively."""
    keep, queue, done = set(), list(roots), set()
    while queue:
        rel = queue.pop()
        if rel in done:
            continue
        done.add(rel)
        chain = tree.resolve(rel)
        if chain is None:
            raise SystemExit(f"build-image: {rel} is in none of the downloaded packages")
        keep.update(chain)
        real = tree.root / chain[-1]
        if not real.is_file() or not is_elf(real):
            continue
        interp, needed = elf_links(real)
        if interp:
            queue.append(merged(interp))
        for soname in needed:
            found = [posixpath.join(d, soname) for d in libdirs if os.path.lexists(tree.root / d / soname)]
            if not found:
                raise SystemExit(f"build-image: {soname}, needed by /{chain[-1]}, is in none of the "
                                 f"downloaded packages (is it in the .deb's Depends?)")
            queue.append(found[0])
    return keep


def documentation(rel):
    """Not in the image: manual pages and documentation, but each package's
    copyright file and numaprobe's NOTICE (the licenses ask for both)."""
    if rel.startswith("usr/share/man/"):
        return True
    if rel.startswith("usr/share/lintian/"):
        return True
    return rel.startswith("usr/share/doc/") and not rel.endswith(("/copyright", "/NOTICE"))


def write_rootfs(tree, keep, extra, out, mtime):
    """rootfs.tar: `keep` from the tree and the `extra` files (path -> bytes),
    owned by root, every entry dated `mtime` (the same .deb gives the same
    tar), plus the accounts, the state and lock directories and the
    merged-usr symlinks."""

    def info(name, kind, mode, uid=0, size=0, link=""):
        ti = tarfile.TarInfo(name)
        ti.type, ti.mode, ti.uid, ti.gid, ti.size, ti.linkname, ti.mtime = kind, mode, uid, uid, size, link, mtime
        ti.uname = ti.gname = ""
        return ti

    extra = {"etc/passwd": PASSWD.encode(), "etc/group": GROUP.encode(), **extra}
    dirs = {posixpath.dirname(p) for p in list(keep) + list(extra)}
    for d in list(dirs):
        while d:
            dirs.add(d)
            d = posixpath.dirname(d)
    dirs.discard("")
    special = {STATE_DIR: (0o700, NOBODY), LOCK_DIR: (0o1777, 0)}
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        for d in sorted(dirs | {"etc", "run", "var", "var/lib"} | set(special)):
            mode, uid = special.get(d, (0o755, 0))
            tar.addfile(info(d, tarfile.DIRTYPE, mode, uid))
        for name in MERGED:
            if (tree.root / "usr" / name).is_dir() and f"usr/{name}" in dirs:
                tar.addfile(info(name, tarfile.SYMTYPE, 0o777, link=f"usr/{name}"))
        for name, data in sorted(extra.items()):
            tar.addfile(info(name, tarfile.REGTYPE, 0o644, size=len(data)), io.BytesIO(data))
        for rel in sorted(keep):
            path = tree.root / rel
            if path.is_symlink():
                tar.addfile(info(rel, tarfile.SYMTYPE, 0o777, link=os.readlink(path)))
            elif path.is_file():
                with open(path, "rb") as f:
                    tar.addfile(info(rel, tarfile.REGTYPE, path.stat().st_mode & 0o7777,
                                     size=path.stat().st_size), f)


def control_fields(paragraph):
    fields, key = {}, None
    for line in paragraph.splitlines():
        if line[:1] in (" ", "\t") and key:
            fields[key] += "\n" + line
        else:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


class Package:
    """What an image is made of and says about itself: the .deb's version,
    revision and address, and after make_rootfs() the Debian packages in it."""

    def __init__(self, deb):
        self.deb = deb
        self.fields = control_fields(run(["dpkg-deb", "-f", deb]))
        self.arch = self.fields["Architecture"]
        if self.arch not in MULTIARCH:
            raise SystemExit(f"build-image: architecture {self.arch} is not one of {sorted(MULTIARCH)}")
        self.version = self.fields["Version"]
        if self.version.endswith("~dev.0"):
            # cmake/version.cmake: no commit count, so the tag sorts before
            # every earlier build's (cpack refuses such a .deb too).
            raise SystemExit(f"build-image: {pathlib.Path(deb).name}: version {self.version} does not sort after "
                             "earlier builds: it was built from a shallow clone or a tree without git history. "
                             "Rebuild the .deb in a clone with its whole history (`git fetch --unshallow`).")
        self.homepage = self.fields.get("Homepage", "")
        with tempfile.TemporaryDirectory(prefix="numaprobe-deb-") as tmp:
            run(["dpkg-deb", "-x", deb, tmp])
            changelog = gzip.decompress(pathlib.Path(tmp, "usr/share/doc/numaprobe/changelog.gz").read_bytes()).decode()
        m = re.search(r"from revision (\S+?);", changelog)
        self.revision = m.group(1) if m else "unknown"
        # The commit's date (packaging-prebuild.cmake): the image's creation
        # date, so that the same .deb gives the same image.
        when = re.search(r"^ -- .+?  (.+)$", changelog, re.M)
        self.time = int(email.utils.parsedate_to_datetime(when.group(1)).timestamp()) if when else 0
        self.static = re.findall(r"([a-z0-9][a-z0-9.+-]*) \(= ([^)]+)\)", self.fields.get("Static-Built-Using", ""))
        self.contents = {}  # Debian package -> control fields, of what the image holds

    @property
    def tag(self):
        """The image tag: the version in semver's spelling ("~" is not allowed)."""
        return self.version.replace("~", "-")


def status_entry(fields):
    """A /var/lib/dpkg/status.d paragraph, as distroless images write them."""
    keep = ("Package", "Source", "Version", "Architecture", "Maintainer", "Installed-Size", "Depends",
            "Homepage", "Description")
    lines = [f"{k}: {fields[k]}" for k in keep[:3] if k in fields] + ["Status: install ok installed"]
    lines += [f"{k}: {fields[k]}" for k in keep[3:] if k in fields]
    return "\n".join(lines) + "\n"


def spdx_id(kind, name):
    return "SPDXRef-" + kind + "-" + re.sub(r"[^A-Za-z0-9.-]", "-", name)


def sbom(pkg):
    """The image's SPDX 2.3 document (JSON): the image, numaprobe, the Debian
    packages the image holds files of, and the sources linked statically into
    numaprobe."""
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(pkg.time))
    image_id, numaprobe_id = "SPDXRef-Image", "SPDXRef-Package-numaprobe"
    name = f"numaprobe-image-{pkg.tag}-{pkg.arch}"
    digest = hashlib.sha256(json.dumps([pkg.version, pkg.revision, pkg.arch, sorted(pkg.contents)]).encode())
    packages = [
        {"SPDXID": image_id, "name": "numaprobe container image", "versionInfo": pkg.tag,
         "primaryPackagePurpose": "CONTAINER", "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
         "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION", "copyrightText": "NOASSERTION",
         "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                           "referenceLocator": f"pkg:oci/numaprobe@{pkg.tag}?arch={pkg.arch}"}]},
        {"SPDXID": numaprobe_id, "name": "numaprobe", "versionInfo": pkg.version, "primaryPackagePurpose": "APPLICATION",
         "downloadLocation": pkg.homepage or "NOASSERTION", "homepage": pkg.homepage or None,
         "sourceInfo": f"built from revision {pkg.revision}", "filesAnalyzed": False,
         "licenseConcluded": "Apache-2.0", "licenseDeclared": "Apache-2.0", "copyrightText": "NOASSERTION",
         "supplier": "Organization: numaprobe maintainers"},
    ]
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                      "relatedSpdxElement": image_id},
                     {"spdxElementId": image_id, "relationshipType": "CONTAINS", "relatedSpdxElement": numaprobe_id}]
    for package, fields in sorted(pkg.contents.items()):
        if package == "numaprobe":
            continue
        ident = spdx_id("Package-deb", package)
        packages.append({
            "SPDXID": ident, "name": package, "versionInfo": fields["Version"], "downloadLocation": "NOASSERTION",
            "filesAnalyzed": False, "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",
            "copyrightText": "NOASSERTION", "supplier": "Organization: Debian",
            "sourceInfo": f"Debian source package {fields.get('Source', package).split()[0]}; its license: "
                          f"/usr/share/doc/{package}/copyright in the image",
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                              "referenceLocator": f"pkg:deb/debian/{package}@{fields['Version']}"
                                                  f"?arch={fields.get('Architecture', pkg.arch)}&distro=debian-12"}]})
        relationships.append({"spdxElementId": image_id, "relationshipType": "CONTAINS", "relatedSpdxElement": ident})
    for source, version in pkg.static:
        ident = spdx_id("Source-deb", source)
        packages.append({
            "SPDXID": ident, "name": source, "versionInfo": version, "primaryPackagePurpose": "LIBRARY",
            "downloadLocation": "NOASSERTION", "filesAnalyzed": False, "licenseConcluded": "NOASSERTION",
            "licenseDeclared": "NOASSERTION", "copyrightText": "NOASSERTION", "supplier": "Organization: Debian",
            "sourceInfo": "Debian 12 source package, compiled into /usr/bin/numaprobe (Static-Built-Using)",
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                              "referenceLocator": f"pkg:deb/debian/{source}@{version}?arch=source&distro=debian-12"}]})
        relationships.append({"spdxElementId": numaprobe_id, "relationshipType": "STATIC_LINK",
                              "relatedSpdxElement": ident})
    for p in packages:
        if p.get("homepage") is None:
            p.pop("homepage", None)
    document = {
        "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT", "name": name,
        "documentNamespace": f"{pkg.homepage or 'https://spdx.org/spdxdocs'}/spdx/{name}-"
                             f"{uuid.UUID(bytes=digest.digest()[:16])}",
        "creationInfo": {"created": created, "creators": ["Tool: numaprobe deploy/container/build-image.py"]},
        "packages": packages, "relationships": relationships,
    }
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()


def make_rootfs(pkg, out, workdir):
    """Writes the image's root filesystem for the .deb of `pkg` to `out`;
    fills in pkg.contents; returns the SBOM (bytes)."""
    arch = pkg.arch
    libdirs = (f"usr/lib/{MULTIARCH[arch]}", "usr/lib")
    packages = sorted(set(depends(pkg.deb)) | {name for name, _ in TOOLS})
    t0 = time.monotonic()
    debs = download(packages, arch, workdir / "debs")
    log(f"{arch}: downloaded {len(debs)} packages in {time.monotonic() - t0:.0f} s")

    tree = Tree(workdir / "tree")
    for d in debs:
        tree.unpack(d)
    name = tree.unpack(pkg.deb)  # last: the package's own files win
    own = [rel for rel, owner in tree.owner.items()
           if owner == name and not documentation(rel) and not rel.startswith("usr/share/numaprobe/")]
    roots = own + [path for _, path in TOOLS]
    keep = select(tree, roots, libdirs)
    owners = {tree.owner[p] for p in keep if p in tree.owner}
    keep |= select(tree, [c for c in (f"usr/share/doc/{owner}/copyright" for owner in owners)
                          if tree.resolve(c)], libdirs)
    pkg.contents = {owner: control_fields(tree.control[owner]) for owner in owners}
    document = sbom(pkg)
    extra = {CONFIG: (tree.root / CONFIG_TEMPLATE).read_bytes(), SBOM: document}
    for owner, fields in pkg.contents.items():
        extra[f"var/lib/dpkg/status.d/{owner}"] = status_entry(fields).encode()
    write_rootfs(tree, keep, extra, out, pkg.time or int(pkg.deb.stat().st_mtime))
    size = sum((tree.root / p).stat().st_size for p in keep if not (tree.root / p).is_symlink())
    log(f"{arch}: root filesystem: {len(keep)} paths, {size / 1e6:.1f} MB, from {', '.join(sorted(owners))}")
    return document


def engine_command(name):
    if name:
        return name
    for candidate in ("podman", "docker", "buildah"):
        if shutil.which(candidate):
            return candidate
    raise SystemExit("build-image: none of podman, docker, buildah is installed")


def host_runs(arch):
    """Whether this host can run `arch`'s programs: natively, or through a
    binfmt_misc entry (qemu-user-static) the kernel has enabled."""
    machine = MACHINE[arch]
    if os.uname().machine == machine:
        return True
    entry = pathlib.Path(f"/proc/sys/fs/binfmt_misc/qemu-{machine}")
    return entry.exists() and entry.read_text().startswith("enabled")


def containerfile(arch, context):
    """Containerfile for `arch`: the RUN steps left out when this host cannot
    run `arch`'s programs (they would fail with an exec format error)."""
    text = (HERE / "Containerfile").read_text()
    if not host_runs(arch):
        kept = [line for line in text.splitlines(keepends=True) if not line.startswith("RUN ")]
        log(f"{arch}: this host cannot run {arch} programs (no binfmt_misc entry for qemu-{MACHINE[arch]}): "
            f"the image is built without its RUN step (check-config); run it once on an {arch} host")
        text = "".join(kept)
    path = context / "Containerfile"
    path.write_text(text)
    return path


def build(pkg, engine, tag, workdir, sbom_out=None):
    context = workdir / f"context-{pkg.arch}"
    context.mkdir()
    document = make_rootfs(pkg, context / "rootfs.tar", workdir / f"work-{pkg.arch}")
    if sbom_out:
        sbom_out.write_bytes(document)
    labels = {"org.opencontainers.image.version": pkg.version, "org.opencontainers.image.revision": pkg.revision,
              "org.opencontainers.image.source": pkg.homepage, "org.opencontainers.image.licenses": "Apache-2.0",
              "org.opencontainers.image.created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(pkg.time))}
    t0 = time.monotonic()
    # No network: nothing in the build downloads, and podman then sets up
    # no bridge or firewall rules.
    subprocess.run([engine, "build", "--network=none", f"--platform=linux/{pkg.arch}",
                    "-f", str(containerfile(pkg.arch, context)),
                    *(a for k, v in labels.items() for a in ("--label", f"{k}={v}")),
                    "-t", tag, str(context)], check=True)
    log(f"{tag} ({pkg.arch}) built by {engine} in {time.monotonic() - t0:.0f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("debs", type=pathlib.Path, nargs="+", metavar="deb",
                    help="numaprobe_<version>_<arch>.deb, one per architecture")
    ap.add_argument("-t", "--tag", help="image name (default numaprobe:<version, ~ as ->)")
    ap.add_argument("--engine", help="podman, docker or buildah (default: the first installed); "
                                     "several .debs need podman or buildah (manifest lists)")
    ap.add_argument("--rootfs", type=pathlib.Path, metavar="TAR",
                    help="write the root filesystem of the one .deb to TAR and build no image")
    ap.add_argument("--sbom", type=pathlib.Path, metavar="FILE",
                    help="also write the SBOM to FILE (with several .debs: FILE.<arch>)")
    args = ap.parse_args()
    pkgs = []
    for path in args.debs:
        if not path.is_file():
            raise SystemExit(f"build-image: {path}: no such file")
        pkgs.append(Package(path.resolve()))
    if len({p.version for p in pkgs}) != 1 or len({p.arch for p in pkgs}) != len(pkgs):
        raise SystemExit("build-image: the .debs must be one version, one per architecture: "
                         + ", ".join(f"{p.version} {p.arch}" for p in pkgs))
    with tempfile.TemporaryDirectory(prefix="numaprobe-image-") as tmp:
        work = pathlib.Path(tmp)
        if args.rootfs:
            if len(pkgs) != 1:
                raise SystemExit("build-image: --rootfs takes one .deb")
            document = make_rootfs(pkgs[0], args.rootfs, work)
            if args.sbom:
                args.sbom.write_bytes(document)
            return
        engine = engine_command(args.engine)
        tag = args.tag or f"numaprobe:{pkgs[0].tag}"
        if len(pkgs) == 1:
            build(pkgs[0], engine, tag, work, args.sbom)
            return
        # One image per architecture, then the index that names them.
        subprocess.run([engine, "manifest", "rm", tag], capture_output=True)
        subprocess.run([engine, "manifest", "create", tag], check=True, capture_output=True)
        for pkg in pkgs:
            arch_tag = f"{tag}-{pkg.arch}"
            build(pkg, engine, arch_tag, work, args.sbom and args.sbom.with_name(f"{args.sbom.name}.{pkg.arch}"))
            subprocess.run([engine, "manifest", "add", tag, f"containers-storage:{arch_tag}"], check=True,
                           capture_output=True)
        log(f"{tag}: an image index of {', '.join(p.arch for p in pkgs)}")


if __name__ == "__main__":
    main()
