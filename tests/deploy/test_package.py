# SPDX-License-Identifier: Apache-2.0
"""The Debian package (ctest label `package`): what cmake/packaging.cmake makes
with CPack (the package_build test builds it first, as a ctest fixture), its
fields and files, lintian, and a real `dpkg -i` / upgrade / `dpkg --purge` on
this machine that must leave nothing behind.

The install tests need root and change this machine's /usr, /etc and /var/lib
for a few seconds; they refuse to run when a numaprobe package is already
installed. Environment: NUMAPROBE_DEB (ctest sets it), NUMAPROBE_BIN.

A cross build's package (release-aarch64: NUMAPROBE_ARCH=aarch64) gets the same
static checks; its libraries are not dpkg-installed here, so their packages come
from the target's shlibs files (NUMAPROBE_TARGET_SYSROOT/shlibs, .ci/arm64-sysroot),
and it is not installed on this machine.
"""
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

from deploy_env import deb_path, numaprobe_bin, require, unavailable

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
README = ROOT / "deploy" / "README.md"

# Lintian warnings that are accepted; each is justified in deploy/README.md
# ("Debian package" -> "lintian"), which the test checks. Errors never are.
# None is needed today (lintian 2.116, Debian 12): the set stays empty.
ALLOWED_LINTIAN_WARNINGS = set()

# Debian architecture and multiarch triplet of the build's target.
DEB_ARCH, MULTIARCH = {"x86_64": ("amd64", "x86_64-linux-gnu"),
                       "aarch64": ("arm64", "aarch64-linux-gnu")}[os.environ.get("NUMAPROBE_ARCH", "x86_64")]
FOREIGN = DEB_ARCH != subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                                     text=True).stdout.strip()
EXPECTED_FILES = {
    "./usr/bin/numaprobe": 0o755,
    "./lib/systemd/system/numaprobe.service": 0o644,
    "./usr/share/numaprobe/numaprobe.yaml": 0o644,
    "./usr/share/numaprobe/default": 0o644,
    "./usr/share/man/man8/numaprobe.8.gz": 0o644,
    "./usr/share/doc/numaprobe/copyright": 0o644,
    "./usr/share/doc/numaprobe/changelog.gz": 0o644,
    "./usr/share/doc/numaprobe/NOTICE": 0o644,
    "./usr/share/doc/numaprobe/numaprobe.reference.yaml": 0o644,
    "./usr/share/lintian/overrides/numaprobe": 0o644,
}
# The configuration files postinst makes from the templates; not conffiles.
CONFIG_FILES = {"/etc/numaprobe/numaprobe.yaml": "usr/share/numaprobe/numaprobe.yaml",
                "/etc/default/numaprobe": "usr/share/numaprobe/default"}
# What the portable binary may load from the host (cmake/portable.cmake).
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
# Where a package could leave something; compared before install and after purge.
WATCHED = ["/etc", "/usr/bin", "/usr/sbin", "/usr/share/man/man8", "/usr/share/doc/numaprobe",
           "/lib/systemd", "/var/lib/numaprobe", "/var/lib/private", "/var/lib/systemd",
           "/var/lib/dpkg/info", f"/usr/lib/{MULTIARCH}/numaprobe"]


def sh(*cmd, check=True, **kw):
    p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"`{' '.join(cmd)}` exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def project_version():
    """The build's version (cmake/version.cmake); ctest passes it."""
    version = os.environ.get("NUMAPROBE_VERSION")
    if not version:
        unavailable("NUMAPROBE_VERSION is not set (ctest sets it)")
    return version


@pytest.fixture(scope="module")
def deb():
    require("dpkg-deb")
    return deb_path()


@pytest.fixture(scope="module")
def fields(deb):
    out = sh("dpkg-deb", "-f", deb).stdout
    result, key = {}, None
    for line in out.splitlines():
        if line[:1] in (" ", "\t") and key:
            result[key] += "\n" + line
        else:
            key, _, value = line.partition(":")
            result[key] = value.strip()
    return result


@pytest.fixture(scope="module")
def contents(deb, tmp_path_factory):
    dest = tmp_path_factory.mktemp("deb")
    sh("dpkg-deb", "-R", deb, str(dest))
    return dest


def test_control_fields(fields):
    assert fields["Package"] == "numaprobe"
    assert fields["Version"] == project_version()
    assert fields["Architecture"] == DEB_ARCH
    assert fields["Section"] == "net" and fields["Priority"] == "optional"
    assert re.fullmatch(r".+ <[^@\s]+@[^@\s]+>", fields["Maintainer"])
    synopsis, _, extended = fields["Description"].partition("\n")
    assert synopsis and len(synopsis) < 80 and extended.strip(), fields["Description"]


def target_shlibs_owners(soname):
    """Packages whose shlibs file names `soname` (libfoo.so.1: "libfoo 1 pkg ...")."""
    root = os.environ.get("NUMAPROBE_TARGET_SYSROOT")
    assert root, "a cross build's package test needs NUMAPROBE_TARGET_SYSROOT (ctest sets it)"
    owners = set()
    for line in (pathlib.Path(root) / "shlibs").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and not parts[0].endswith(":") and f"{parts[0]}.so.{parts[1]}" == soname:
            owners.add(parts[2])
    return owners


def test_depends_come_from_the_binary(fields, contents):
    """Every library the binary links is provided by a package in Depends
    (dpkg-shlibdeps), with a minimum version."""
    depends = {re.match(r"\s*([\w.+-]+)", d).group(1): d.strip() for d in fields["Depends"].split(",")}
    needed = re.findall(r"\(NEEDED\).*\[(.+)\]", sh("readelf", "-d", str(contents / "usr/bin/numaprobe")).stdout)
    assert needed
    for soname in needed:
        if FOREIGN:
            owners = target_shlibs_owners(soname)
            assert owners & set(depends), f"{soname} (from {owners}) is not in Depends: {fields['Depends']}"
            continue
        owners = set()
        for line in sh("dpkg", "-S", soname, check=False).stdout.splitlines():
            pkgs, _, path = line.partition(": ")
            if path.endswith("/" + soname) and "-dev" not in pkgs:
                owners |= {p.split(":")[0].strip() for p in pkgs.split(",")}
        # A shlibs file may name a virtual package its owner provides
        # (libspdlog1.10 -> libspdlog1.10-fmt9).
        for owner in list(owners):
            provides = sh("dpkg-query", "-W", "-f", "${Provides}", owner, check=False).stdout
            owners |= {re.match(r"\s*([\w.+-]+)", p).group(1) for p in provides.split(",") if p.strip()}
        assert owners & set(depends), f"{soname} (from {owners}) is not in Depends: {fields['Depends']}"
    # The portable binary: the C library (GLIBC_2.34 at most) and GCC's unwinder.
    assert set(depends) == {"libc6", "libgcc-s1"}, fields["Depends"]
    assert re.fullmatch(r"libc6 \(>= 2\.(\d+)\)", depends["libc6"]), fields["Depends"]
    # Natively dpkg-shlibdeps reads libc6's symbols file: the newest symbol
    # used, 2.34 at most. A cross build has only the arm64 packages' shlibs
    # files, whose libc6 line names Debian 12's own version (2.36); what the
    # binary needs is test_portable.py's to check.
    if not FOREIGN:
        assert int(re.search(r"2\.(\d+)", depends["libc6"]).group(1)) <= 34, fields["Depends"]


def test_static_built_using_names_what_is_linked_in(fields):
    """Static-Built-Using (cmake/portable.cmake): every library compiled into
    the binary, with the Debian source version; NOTICE names each."""
    entries = dict(re.findall(r"([a-z0-9][a-z0-9.+-]*) \(= ([^)]+)\)", fields["Static-Built-Using"]))
    for source in ("openssl", "zlib", "hwloc", "numactl", "libxcrypt", "yaml-cpp", "prometheus-cpp", "spdlog",
                   "fmtlib", "cli11", "nlohmann-json3", "boost1.74", "gcc-12"):
        assert source in entries, f"{source} missing from Static-Built-Using: {fields['Static-Built-Using']}"
    notice = (ROOT / "NOTICE").read_text()
    for source in entries:
        assert f"({source})" in notice, f"NOTICE does not name {source}, which the binary links"
    if not FOREIGN:
        for source, version in entries.items():
            if source in ("prometheus-cpp", "spdlog", "fmtlib"):
                continue  # compiled here from source (.ci/portable-sources)
            installed = sh("dpkg-query", "-W", "-f", "${source:Package} ${source:Version}\n", check=False).stdout
            assert f"{source} {version}" in installed.splitlines(), (source, version)


def test_files_modes_and_contents(deb, contents):
    listing = {}
    for line in sh("dpkg-deb", "-c", deb).stdout.splitlines():
        mode, owner, _size, _date, _time, path = line.split(None, 5)
        if mode.startswith("-"):
            listing[path] = (mode, owner)
    assert set(listing) == set(EXPECTED_FILES), sorted(listing)
    for path, expected in EXPECTED_FILES.items():
        mode, owner = listing[path]
        assert owner == "root/root", (path, owner)
        bits = sum(1 << (8 - i) for i, c in enumerate(mode[1:]) if c != "-")
        assert bits == expected, (path, mode)
    same = {"lib/systemd/system/numaprobe.service": "deploy/systemd/numaprobe.service",
            "usr/share/numaprobe/default": "deploy/systemd/numaprobe.default",
            "usr/share/numaprobe/numaprobe.yaml": "config/numaprobe.yaml",
            "usr/share/doc/numaprobe/copyright": "deploy/debian/copyright",
            "usr/share/doc/numaprobe/NOTICE": "NOTICE",
            "usr/share/doc/numaprobe/numaprobe.reference.yaml": "docs/numaprobe.reference.yaml"}
    for packaged, source in same.items():
        assert (contents / packaged).read_bytes() == (ROOT / source).read_bytes(), packaged
    man = sh("zcat", str(contents / "usr/share/man/man8/numaprobe.8.gz")).stdout
    assert man == (ROOT / "docs/numaprobe.8").read_text()
    assert "not stripped" not in sh("file", "-b", str(contents / "usr/bin/numaprobe")).stdout
    # The portable binary: OpenSSL, zlib and the rest linked in; no RUNPATH.
    dynamic = sh("readelf", "-d", str(contents / "usr/bin/numaprobe")).stdout
    assert "runpath" not in dynamic.lower() and "rpath" not in dynamic.lower(), dynamic
    needed = set(re.findall(r"\(NEEDED\).*\[(.+)\]", dynamic))
    assert needed <= ALLOWED_NEEDED, needed


def test_maintainer_scripts_and_no_conffiles(contents):
    """The /etc files are the administrator's (postinst makes them, purge
    removes them): no conffiles, so an upgrade never asks about them."""
    control = contents / "DEBIAN"
    assert not (control / "conffiles").exists(), (control / "conffiles").read_text()
    for path, template in CONFIG_FILES.items():
        assert f"/{template}" in (control / "postinst").read_text() and path in (control / "postrm").read_text()
    for script in ("postinst", "prerm", "postrm"):
        path = control / script
        assert path.stat().st_mode & 0o777 == 0o755, script
        sh("sh", "-n", str(path))
    # DynamicUser=yes in the unit: no system user to create or remove.
    unit = (contents / "lib/systemd/system/numaprobe.service").read_text()
    assert re.search(r"^DynamicUser=yes", unit, re.M)
    assert "adduser" not in (control / "postinst").read_text()
    assert "/var/lib/private/numaprobe" in (control / "postrm").read_text()


def test_lintian(deb):
    lintian = require("lintian")
    p = sh(lintian, "--tag-display-limit", "0", "--display-level", ">=warning", deb, check=False, timeout=600)
    tags = re.findall(r"^([EW]): numaprobe(?: \w+)?: (\S+)", p.stdout, re.M)
    errors = [t for level, t in tags if level == "E"]
    assert not errors, p.stdout
    warnings = {t for level, t in tags if level == "W"}
    assert warnings <= set(ALLOWED_LINTIAN_WARNINGS), f"unjustified lintian warnings:\n{p.stdout}"
    readme = README.read_text()
    for tag in ALLOWED_LINTIAN_WARNINGS:
        assert tag in readme, f"deploy/README.md does not justify lintian warning {tag}"
    assert p.returncode == 0, p.stdout + p.stderr


# --- dpkg on this machine -------------------------------------------------------------

def snapshot():
    paths = set()
    for top in WATCHED:
        if os.path.lexists(top):
            paths.add(top)
        for dirpath, dirnames, filenames in os.walk(top):
            for name in dirnames + filenames:
                paths.add(os.path.join(dirpath, name))
    return paths


def installed_version():
    p = sh("dpkg-query", "-W", "-f", "${Status} ${Version}", "numaprobe", check=False)
    return p.stdout.split()[-1] if p.returncode == 0 and "installed" in p.stdout.split()[:3] else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.read().decode()


@pytest.fixture(scope="module")
def root_dpkg():
    if FOREIGN:
        pytest.skip(f"an {DEB_ARCH} package cannot be installed and run on this machine")
    if os.geteuid() != 0:
        unavailable("installing the .deb needs root")
    require("dpkg")
    if installed_version() or sh("dpkg-query", "-W", "numaprobe", check=False).returncode == 0:
        pytest.fail("a numaprobe package is already known to dpkg on this machine; "
                    "`dpkg --purge numaprobe` first (the test would replace it)")


def upgraded_copy(deb, version, dest):
    """The same package with another version and a changed configuration
    template, as a later release may have: dpkg -i of it is an upgrade that
    would ask about a conffile edited on the host."""
    tree = dest / "tree"
    sh("dpkg-deb", "-R", deb, str(tree))
    control = tree / "DEBIAN" / "control"
    control.write_text(re.sub(r"^Version: .*$", f"Version: {version}", control.read_text(), flags=re.M))
    for template in CONFIG_FILES.values():
        path = tree / template
        path.write_text(path.read_text() + "# a line the next release added\n")
    md5sums = tree / "DEBIAN" / "md5sums"
    md5sums.write_text(sh("sh", "-c", "find usr lib -type f | sort | xargs md5sum", cwd=tree).stdout)
    out = dest / f"numaprobe_{version}_amd64.deb"
    sh("dpkg-deb", "--root-owner-group", "-b", str(tree), str(out))
    return out


def apt(*args):
    """apt-get as deploy/README.md tells operators to use it, and as an
    unattended upgrade runs it: no terminal to answer a question on."""
    return sh("apt-get", "-y", "-q", "--no-install-recommends", *args,
              env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}, stdin=subprocess.DEVNULL, timeout=600)


def serves_tls_as_installed(tmp_path):
    """The installed binary serves HTTPS with the libssl3 its Depends names
    (docs/security.md "TLS")."""
    require("openssl")
    curl = require("curl")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    sh("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
       "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert))
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n")
    port = free_port()
    proc = subprocess.Popen(["/usr/bin/numaprobe", "serve", "--config.file=/etc/numaprobe/numaprobe.yaml",
                             f"--web.listen-address=127.0.0.1:{port}", f"--web.config.file={web}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            p = sh(curl, "-sS", "--max-time", "5", "--cacert", str(cert), f"https://127.0.0.1:{port}/metrics",
                   check=False)
            if p.returncode == 0:
                break
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read()
            time.sleep(0.2)
        assert "numaprobe_build_info" in p.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=15)
    assert rc == 0, proc.stdout.read()


def test_install_run_upgrade_remove_purge(root_dpkg, deb, tmp_path):
    require("apt-get")
    # systemd's parent of DynamicUser state directories, as on any systemd host;
    # it is systemd's, so purge leaves it.
    os.makedirs("/var/lib/private", mode=0o700, exist_ok=True)
    before = snapshot()
    try:
        apt("install", str(pathlib.Path(deb).resolve()))
        assert installed_version() == project_version()
        # The configuration files, made from the templates by postinst.
        for path, template in CONFIG_FILES.items():
            assert pathlib.Path(path).read_text() == pathlib.Path("/" + template).read_text(), path
        # Enabled for the next boot even where systemd is not running (as here).
        assert os.path.islink("/etc/systemd/system/multi-user.target.wants/numaprobe.service")

        # The installed binary, with the installed config.
        out = sh("/usr/bin/numaprobe", "--version").stdout
        assert project_version() in out, out
        sh("/usr/bin/numaprobe", "check-config", "/etc/numaprobe/numaprobe.yaml")
        port = free_port()
        proc = subprocess.Popen(["/usr/bin/numaprobe", "serve", "--config.file=/etc/numaprobe/numaprobe.yaml",
                                 f"--web.listen-address=127.0.0.1:{port}"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    status, _ = get(f"http://127.0.0.1:{port}/-/healthy")
                    if status == 200:
                        break
                except OSError:
                    pass
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read()
                time.sleep(0.2)
            assert "numaprobe_build_info" in get(f"http://127.0.0.1:{port}/metrics")[1]
        finally:
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=15)
        assert rc == 0, proc.stdout.read()
        serves_tls_as_installed(tmp_path)

        # Upgrade to a release whose templates changed, with both files edited
        # here: no question (stdin is /dev/null, as for unattended-upgrades),
        # both edits kept, the new templates in /usr/share/numaprobe.
        conf = pathlib.Path("/etc/numaprobe/numaprobe.yaml")
        conf.write_text(conf.read_text() + "schedule:\n  interval: 7m\n")
        defaults = pathlib.Path("/etc/default/numaprobe")
        defaults.write_text(defaults.read_text().replace('ARGS=""', 'ARGS="--log.level=debug"'))
        edited = {path: pathlib.Path(path).read_text() for path in CONFIG_FILES}
        newer = upgraded_copy(deb, project_version() + "+upgradetest1", tmp_path)
        upgrade = apt("install", str(newer))
        assert installed_version() == project_version() + "+upgradetest1"
        assert "Configuration file" not in upgrade.stdout + upgrade.stderr, upgrade.stdout
        for path, template in CONFIG_FILES.items():
            assert pathlib.Path(path).read_text() == edited[path], path
            assert pathlib.Path("/" + template).read_text().endswith("# a line the next release added\n")
        printed = sh("/usr/bin/numaprobe", "check-config", "--print", str(conf)).stdout
        assert "interval: 7m" in printed, printed

        # State as the service leaves it (DynamicUser: /var/lib/private/numaprobe
        # behind a symlink); no daemon here runs long enough to write a baseline.
        os.makedirs("/var/lib/private/numaprobe", mode=0o700, exist_ok=True)
        pathlib.Path("/var/lib/private/numaprobe/state.json").write_text("{}\n")
        if not os.path.lexists("/var/lib/numaprobe"):
            os.symlink("private/numaprobe", "/var/lib/numaprobe")

        # remove: the program goes, the configuration and the state stay.
        apt("remove", "numaprobe")
        assert not os.path.exists("/usr/bin/numaprobe")
        for path in CONFIG_FILES:
            assert pathlib.Path(path).read_text() == edited[path], path
        assert os.path.exists("/var/lib/numaprobe/state.json")
    finally:
        purge = sh("apt-get", "-y", "-q", "purge", "numaprobe", check=False,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    assert purge.returncode == 0, purge.stdout + purge.stderr
    assert installed_version() is None
    assert sh("dpkg-query", "-W", "numaprobe", check=False).returncode != 0, "dpkg still knows the package"
    left = sorted(snapshot() - before)
    assert not left, f"left behind after dpkg --purge: {left}"
