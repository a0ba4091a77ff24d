#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds numaprobe's container image from its .deb:

    deploy/container/build-image.py build/release/package/numaprobe_0.1.0_amd64.deb

The image holds the package's files and the shared libraries they need, on an
empty base (`FROM scratch`): no shell, no package manager, no libc tools.

1. Download the packages in the .deb's Depends, and what those depend on,
   from the Debian archive (mmdebstrap --variant=extract, no chroot is set up).
2. Unpack them and the .deb into a scratch tree, /lib and /bin folded into
   /usr (merged-usr, as in Debian 12 images).
3. Keep the .deb's files (without man pages and documentation) and, starting
   from every ELF file among them, the libraries they load (DT_NEEDED, the
   program interpreter, symlinks followed), and the copyright file of every
   package something was kept from. Plus coreutils' `install`, which the
   Kubernetes init container runs to hand the hostPath state directory to
   65534 (deploy/kubernetes/daemonset.yaml), with its libraries.
4. Add /etc/passwd and /etc/group (root, nobody), the state directory
   (65534:65534, 0700) and /run/lock (1777) for probe_lock_file, and write
   all of it as rootfs.tar, every file owned by root.
5. Build Containerfile (beside this script) over rootfs.tar with podman,
   docker or buildah: the image's settings, and `check-config` run in the new
   image, which fails the build if a library is missing.

Libraries a program opens with dlopen(3) by name are not found by step 3
unless they are in the .deb or linked by something that is (numaprobe
opens none). Needs python3, mmdebstrap, readelf (binutils), dpkg-deb
and one of the engines; root, or mmdebstrap's unshare mode (subuids).
"""
import argparse
import io
import os
import pathlib
import posixpath
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
SUITE = "bookworm"
MIRRORS = (
    "deb http://deb.debian.org/debian bookworm main",
    "deb http://deb.debian.org/debian bookworm-updates main",
    "deb http://deb.debian.org/debian-security bookworm-security main",
)
MULTIARCH = {"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}
# Directories that merged-usr folds into /usr; the image keeps them as symlinks.
MERGED = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# What the init container runs: (package, path in the image).
TOOLS = (("coreutils", "usr/bin/install"),)
STATE_DIR = "var/lib/numaprobe"  # state_directory in config/numaprobe.yaml
LOCK_DIR = "run/lock"  # the directory of probe_lock_file
NOBODY = 65534
PASSWD = "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
GROUP = "root:x:0:\nnogroup:x:65534:\n"


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

    def unpack(self, deb):
        package = deb_field(deb, "Package")
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
    return rel.startswith("usr/share/man/") or (rel.startswith("usr/share/doc/") and not rel.endswith("/copyright"))


def write_rootfs(tree, keep, out, mtime):
    """rootfs.tar: `keep` from the tree, owned by root, every entry dated
    `mtime` (the same .deb gives the same tar), plus the accounts, the state
    and lock directories and the merged-usr symlinks."""

    def info(name, kind, mode, uid=0, size=0, link=""):
        ti = tarfile.TarInfo(name)
        ti.type, ti.mode, ti.uid, ti.gid, ti.size, ti.linkname, ti.mtime = kind, mode, uid, uid, size, link, mtime
        ti.uname = ti.gname = ""
        return ti

    dirs = {posixpath.dirname(p) for p in keep}
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
        for text, name in ((PASSWD, "etc/passwd"), (GROUP, "etc/group")):
            data = text.encode()
            tar.addfile(info(name, tarfile.REGTYPE, 0o644, size=len(data)), io.BytesIO(data))
        for rel in sorted(keep):
            path = tree.root / rel
            if path.is_symlink():
                tar.addfile(info(rel, tarfile.SYMTYPE, 0o777, link=os.readlink(path)))
            elif path.is_file():
                with open(path, "rb") as f:
                    tar.addfile(info(rel, tarfile.REGTYPE, path.stat().st_mode & 0o7777,
                                     size=path.stat().st_size), f)


def make_rootfs(deb, out, workdir):
    """Writes the image's root filesystem for `deb` to `out`; returns the
    package's Version."""
    arch = deb_field(deb, "Architecture")
    if arch not in MULTIARCH:
        raise SystemExit(f"build-image: architecture {arch} is not one of {sorted(MULTIARCH)}")
    libdirs = (f"usr/lib/{MULTIARCH[arch]}", "usr/lib")
    packages = sorted(set(depends(deb)) | {pkg for pkg, _ in TOOLS})
    t0 = time.monotonic()
    debs = download(packages, arch, workdir / "debs")
    log(f"downloaded {len(debs)} packages in {time.monotonic() - t0:.0f} s")

    tree = Tree(workdir / "tree")
    for d in debs:
        tree.unpack(d)
    name = tree.unpack(deb)  # last: the package's own files win
    own = [rel for rel, pkg in tree.owner.items() if pkg == name and not documentation(rel)]
    roots = own + [path for _, path in TOOLS]
    keep = select(tree, roots, libdirs)
    owners = {tree.owner[p] for p in keep if p in tree.owner}
    keep |= select(tree, [c for c in (f"usr/share/doc/{pkg}/copyright" for pkg in owners)
                          if tree.resolve(c)], libdirs)
    write_rootfs(tree, keep, out, int(os.environ.get("SOURCE_DATE_EPOCH") or deb.stat().st_mtime))
    size = sum((tree.root / p).stat().st_size for p in keep if not (tree.root / p).is_symlink())
    log(f"root filesystem: {len(keep)} paths, {size / 1e6:.1f} MB, from {', '.join(sorted(owners))}")
    return deb_field(deb, "Version")


def engine_command(name):
    if name:
        return name
    for candidate in ("podman", "docker", "buildah"):
        if shutil.which(candidate):
            return candidate
    raise SystemExit("build-image: none of podman, docker, buildah is installed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("deb", type=pathlib.Path, help="numaprobe_<version>_<arch>.deb")
    ap.add_argument("-t", "--tag", help="image name (default numaprobe:<version>)")
    ap.add_argument("--engine", help="podman, docker or buildah (default: the first installed)")
    ap.add_argument("--rootfs", type=pathlib.Path, metavar="TAR",
                    help="write the root filesystem to TAR and build no image")
    args = ap.parse_args()
    deb = args.deb.resolve()
    if not deb.is_file():
        raise SystemExit(f"build-image: {args.deb}: no such file")
    with tempfile.TemporaryDirectory(prefix="numaprobe-image-") as tmp:
        work = pathlib.Path(tmp)
        context = work / "context"
        context.mkdir()
        version = make_rootfs(deb, args.rootfs or context / "rootfs.tar", work)
        if args.rootfs:
            return
        shutil.copyfile(HERE / "Containerfile", context / "Containerfile")
        tag = args.tag or f"numaprobe:{version}"
        engine = engine_command(args.engine)
        t0 = time.monotonic()
        # No network: nothing in the build downloads, and podman then sets up
        # no bridge or firewall rules.
        subprocess.run([engine, "build", "--network=none", "-f", str(context / "Containerfile"),
                        "--label", f"org.opencontainers.image.source={deb_field(deb, 'Homepage')}",
                        "-t", tag, str(context)], check=True)
        log(f"{tag} built by {engine} in {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
