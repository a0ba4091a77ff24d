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
    "./etc/numaprobe/numaprobe.yaml": 0o644,
    "./etc/default/numaprobe": 0o644,
    "./usr/share/man/man8/numaprobe.8.gz": 0o644,
    "./usr/share/doc/numaprobe/copyright": 0o644,
    "./usr/share/doc/numaprobe/changelog.gz": 0o644,
}
CONFFILES = {"/etc/numaprobe/numaprobe.yaml", "/etc/default/numaprobe"}
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
    m = re.search(r"project\(numaprobe VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    return m.group(1)


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
    assert "(>=" in depends["libnuma1"] and "(>=" in depends["libc6"], fields["Depends"]


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
            "etc/default/numaprobe": "deploy/systemd/numaprobe.default",
            "etc/numaprobe/numaprobe.yaml": "config/numaprobe.yaml",
            "usr/share/doc/numaprobe/copyright": "deploy/debian/copyright"}
    for packaged, source in same.items():
        assert (contents / packaged).read_bytes() == (ROOT / source).read_bytes(), packaged
    man = sh("zcat", str(contents / "usr/share/man/man8/numaprobe.8.gz")).stdout
    assert man == (ROOT / "docs/numaprobe.8").read_text()
    assert "not stripped" not in sh("file", "-b", str(contents / "usr/bin/numaprobe")).stdout
    # TLS links OpenSSL 3 directly (Boost.Asio's ssl layer): no RUNPATH, no private libraries.
    dynamic = sh("readelf", "-d", str(contents / "usr/bin/numaprobe")).stdout
    assert "runpath" not in dynamic.lower(), dynamic
    assert "[libssl.so.3]" in dynamic and "[libz.so.1]" in dynamic, dynamic


def test_maintainer_scripts_and_conffiles(contents):
    control = contents / "DEBIAN"
    assert set((control / "conffiles").read_text().split()) == CONFFILES
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
    """The same package with another version: dpkg -i of it is an upgrade."""
    tree = dest / "tree"
    sh("dpkg-deb", "-R", deb, str(tree))
    control = tree / "DEBIAN" / "control"
    control.write_text(re.sub(r"^Version: .*$", f"Version: {version}", control.read_text(), flags=re.M))
    out = dest / f"numaprobe_{version}_amd64.deb"
    sh("dpkg-deb", "--root-owner-group", "-b", str(tree), str(out))
    return out


def apt(*args):
    """apt-get as deploy/README.md tells operators to use it."""
    return sh("apt-get", "-y", "-q", "--no-install-recommends", *args,
              env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}, timeout=600)


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

        # Upgrade: an administrator's edit of a conffile survives it.
        conf = pathlib.Path("/etc/numaprobe/numaprobe.yaml")
        conf.write_text(conf.read_text() + "# edited by the administrator\n")
        newer = upgraded_copy(deb, project_version() + "+upgradetest1", tmp_path)
        apt("install", str(newer))
        assert installed_version() == project_version() + "+upgradetest1"
        assert conf.read_text().endswith("# edited by the administrator\n")
        sh("/usr/bin/numaprobe", "check-config", str(conf))

        # State as the service leaves it (DynamicUser: /var/lib/private/numaprobe
        # behind a symlink); no daemon here runs long enough to write a baseline.
        os.makedirs("/var/lib/private/numaprobe", mode=0o700, exist_ok=True)
        pathlib.Path("/var/lib/private/numaprobe/state.json").write_text("{}\n")
        if not os.path.lexists("/var/lib/numaprobe"):
            os.symlink("private/numaprobe", "/var/lib/numaprobe")

        # remove: the program goes, the configuration and the state stay.
        apt("remove", "numaprobe")
        assert not os.path.exists("/usr/bin/numaprobe")
        assert conf.read_text().endswith("# edited by the administrator\n")
        assert os.path.exists("/etc/default/numaprobe")
        assert os.path.exists("/var/lib/numaprobe/state.json")
    finally:
        purge = sh("apt-get", "-y", "-q", "purge", "numaprobe", check=False,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    assert purge.returncode == 0, purge.stdout + purge.stderr
    assert installed_version() is None
    assert sh("dpkg-query", "-W", "numaprobe", check=False).returncode != 0, "dpkg still knows the package"
    left = sorted(snapshot() - before)
    assert not left, f"left behind after dpkg --purge: {left}"
