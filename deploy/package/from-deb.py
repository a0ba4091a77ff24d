#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Makes numaprobe's release tarball and RPM from its .deb, so that every
package of a version carries the same binary (one build per architecture):

    deploy/package/from-deb.py build/release/package/numaprobe_<version>_amd64.deb
    -> numaprobe-<version>.linux-amd64.tar.gz     (next to the .deb, or --out DIR)
       numaprobe-<version>-1.x86_64.rpm

The binary is the portable one (cmake/portable.cmake): it loads only the C
library and libgcc_s, GLIBC_2.34 at most, so both run on EL9, Amazon Linux
2023, Ubuntu 22.04, Debian 12 and later.

The tarball, as node_exporter's: one directory numaprobe-<version>.linux-<arch>
holding the binary, LICENSE, NOTICE, the configuration (numaprobe.yaml, the
/etc file, and numaprobe.reference.yaml, every key), the systemd unit and its
numaprobe.default, and the manual page numaprobe.8. Reproducible: sorted,
owned by root, dated like the package's changelog.

The RPM (deploy/package/numaprobe.spec.in, rpmbuild from Debian's rpm
package): the same files where RPM distributions keep them, the unit in
/usr/lib/systemd/system, the configuration as %config(noreplace), the
statically linked libraries as bundled() Provides. Needs dpkg-deb, rpmbuild.
"""
import argparse
import email.utils
import gzip
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# Debian architecture -> (Go's name for the tarball, RPM's)
ARCHES = {"amd64": ("amd64", "x86_64"), "arm64": ("arm64", "aarch64")}
# Debian source package -> the name RPM distributions give the bundled code.
BUNDLED_NAMES = {"boost1.74": "boost", "fmtlib": "fmt", "nlohmann-json3": "nlohmann-json", "numactl": "libnuma",
                 "gcc-12": "libstdc++"}


def run(cmd, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"from-deb: `{' '.join(map(str, cmd))}` exited {p.returncode}:\n{(p.stderr or p.stdout)[-3000:]}")
    return p.stdout


def deb_field(deb, name):
    return run(["dpkg-deb", "-f", deb, name]).strip()


def upstream_version(debian_version):
    """1:1.2.13.dfsg-1 -> 1.2.13.dfsg; 3.0.19-1~deb12u2 -> 3.0.19."""
    version = debian_version.split(":", 1)[-1]
    return version.rsplit("-", 1)[0] if "-" in version else version


def bundled(static_built_using):
    """`Provides: bundled(openssl) = 3.0.19` lines from a Static-Built-Using field."""
    lines = []
    for item in filter(None, (i.strip() for i in static_built_using.split(","))):
        m = re.fullmatch(r"([a-z0-9][a-z0-9.+-]*) \(= ([^)]+)\)", item)
        if not m:
            raise SystemExit(f"from-deb: cannot read Static-Built-Using entry {item!r}")
        name = BUNDLED_NAMES.get(m.group(1), m.group(1))
        lines.append(f"Provides:       bundled({name}) = {upstream_version(m.group(2))}")
    return "\n".join(lines)


class Deb:
    """The unpacked package: its files and what its control fields say."""

    def __init__(self, deb, workdir):
        self.path = pathlib.Path(deb)
        self.tree = workdir / "deb"
        run(["dpkg-deb", "-x", self.path, self.tree])
        self.version = deb_field(deb, "Version")
        if self.version.endswith("~dev.0"):
            # cmake/version.cmake: no commit count, so it sorts before every
            # earlier build and would never upgrade one (cpack refuses it too).
            raise SystemExit(f"from-deb: {self.path.name}: version {self.version} does not sort after earlier "
                             "builds: it was built from a shallow clone or a tree without git history. Rebuild "
                             "the .deb in a clone with its whole history (`git fetch --unshallow`).")
        self.arch = deb_field(deb, "Architecture")
        if self.arch not in ARCHES:
            raise SystemExit(f"from-deb: architecture {self.arch} is not one of {sorted(ARCHES)}")
        self.homepage = deb_field(deb, "Homepage")
        self.maintainer = deb_field(deb, "Maintainer")
        self.static_built_using = deb_field(deb, "Static-Built-Using")
        changelog = gzip.decompress((self.tree / "usr/share/doc/numaprobe/changelog.gz").read_bytes()).decode()
        revision = re.search(r"from revision (\S+?);", changelog)
        self.revision = revision.group(1) if revision else "unknown"
        # The changelog's date is the commit's (packaging-prebuild.cmake): the
        # same .deb gives the same tarball and RPM.
        self.time = int(email.utils.parsedate_to_datetime(
            re.search(r"^ -- .+?  (.+)$", changelog, re.M).group(1)).timestamp())

    def file(self, rel):
        path = self.tree / rel
        if not path.is_file():
            raise SystemExit(f"from-deb: {self.path.name} has no /{rel}")
        return path


def tarball(deb, out_dir):
    go_arch, _ = ARCHES[deb.arch]
    top = f"numaprobe-{deb.version}.linux-{go_arch}"
    members = [  # (name in the tarball, bytes, mode)
        ("numaprobe", deb.file("usr/bin/numaprobe").read_bytes(), 0o755),
        ("LICENSE", (ROOT / "LICENSE").read_bytes(), 0o644),
        ("NOTICE", deb.file("usr/share/doc/numaprobe/NOTICE").read_bytes(), 0o644),
        ("numaprobe.yaml", deb.file("usr/share/numaprobe/numaprobe.yaml").read_bytes(), 0o644),
        ("numaprobe.reference.yaml", deb.file("usr/share/doc/numaprobe/numaprobe.reference.yaml").read_bytes(), 0o644),
        ("numaprobe.service", deb.file("lib/systemd/system/numaprobe.service").read_bytes(), 0o644),
        ("numaprobe.default", deb.file("usr/share/numaprobe/default").read_bytes(), 0o644),
        ("numaprobe.8", gzip.decompress(deb.file("usr/share/man/man8/numaprobe.8.gz").read_bytes()), 0o644),
    ]
    path = out_dir / f"{top}.tar.gz"
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=deb.time) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def entry(name, kind, mode, size=0):
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.size, info.mtime = kind, mode, size, deb.time
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info
        tar.addfile(entry(top, tarfile.DIRTYPE, 0o755))
        for name, data, mode in sorted(members):
            tar.addfile(entry(f"{top}/{name}", tarfile.REGTYPE, mode, len(data)), io.BytesIO(data))
    return path


def rpm(deb, out_dir, workdir):
    _, rpm_arch = ARCHES[deb.arch]
    payload = workdir / "payload"
    placement = {  # RPM path <- .deb path (or source file)
        "usr/bin/numaprobe": deb.file("usr/bin/numaprobe"),
        "usr/lib/systemd/system/numaprobe.service": deb.file("lib/systemd/system/numaprobe.service"),
        "etc/numaprobe/numaprobe.yaml": deb.file("usr/share/numaprobe/numaprobe.yaml"),
        "etc/default/numaprobe": deb.file("usr/share/numaprobe/default"),
        "usr/share/man/man8/numaprobe.8.gz": deb.file("usr/share/man/man8/numaprobe.8.gz"),
        "usr/share/doc/numaprobe/NOTICE": deb.file("usr/share/doc/numaprobe/NOTICE"),
        "usr/share/doc/numaprobe/numaprobe.reference.yaml": deb.file("usr/share/doc/numaprobe/numaprobe.reference.yaml"),
        "usr/share/licenses/numaprobe/LICENSE": ROOT / "LICENSE",
    }
    for rel, source in placement.items():
        target = payload / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        os.chmod(target, 0o755 if rel == "usr/bin/numaprobe" else 0o644)
        os.utime(target, (deb.time, deb.time))
    date = time.strftime("%a %b %d %Y", time.gmtime(deb.time))
    fields = {"VERSION": deb.version, "HOMEPAGE": deb.homepage, "BUNDLED": bundled(deb.static_built_using),
              "PAYLOAD": str(payload), "DATE": date, "MAINTAINER": deb.maintainer, "REVISION": deb.revision}
    spec_text = (HERE / "numaprobe.spec.in").read_text()
    for key, value in fields.items():
        spec_text = spec_text.replace(f"@{key}@", value)
    leftover = re.findall(r"@[A-Z]+@", spec_text)
    if leftover:
        raise SystemExit(f"from-deb: numaprobe.spec.in has unknown fields {leftover}")
    spec = workdir / "numaprobe.spec"
    spec.write_text(spec_text)
    topdir = workdir / "rpmbuild"
    run(["rpmbuild", "-bb", "--target", rpm_arch, "--define", f"_topdir {topdir}", "--define", f"_rpmdir {topdir}/RPMS",
         "--define", "_binary_payload w19.zstdio", "--define", f"source_date_epoch {deb.time}",
         "--define", "use_source_date_epoch_as_buildtime 1", "--define", "clamp_mtime_to_source_date_epoch 1",
         spec], env={**os.environ, "SOURCE_DATE_EPOCH": str(deb.time)})
    built = sorted((topdir / "RPMS").rglob("*.rpm"))
    if len(built) != 1:
        raise SystemExit(f"from-deb: rpmbuild made {[p.name for p in built]}, expected one package")
    path = out_dir / built[0].name
    shutil.copyfile(built[0], path)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("deb", type=pathlib.Path, help="numaprobe_<version>_<arch>.deb")
    ap.add_argument("--out", type=pathlib.Path, help="directory for the tarball and the RPM (default: the .deb's)")
    ap.add_argument("--no-rpm", action="store_true", help="make the tarball only (no rpmbuild needed)")
    args = ap.parse_args(argv)
    out = (args.out or args.deb.resolve().parent)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="numaprobe-package-") as tmp:
        deb = Deb(args.deb.resolve(), pathlib.Path(tmp))
        made = [tarball(deb, out)]
        if not args.no_rpm:
            made.append(rpm(deb, out, pathlib.Path(tmp)))
    for path in made:
        print(path)


if __name__ == "__main__":
    sys.exit(main())
