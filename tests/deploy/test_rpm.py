# SPDX-License-Identifier: Apache-2.0
"""The RPM (ctest entry `rpm`, label `package`) that deploy/package/from-deb.py
makes from the .deb, checked with rpm's own tools (Debian's rpm and rpmlint):

* its header: name, version (the .deb's), architecture, license, the
  statically linked libraries as bundled() Provides, and Requires that ask
  for nothing newer than GLIBC_2.34;
* its payload: files, modes, owners, the configuration as %config(noreplace);
* its scriptlets: shell syntax, and what they do when rpm runs them: install,
  upgrade and erase in an alternate root (rpm --root) whose systemctl records
  its calls: preset on install, try-restart on upgrade, disable --now on
  erase; an edited configuration survives upgrades (a changed template goes
  to .rpmnew, never over the edit) and an erase (.rpmsave);
* rpmlint: no errors, no warnings.

What cannot be shown here: dnf resolving the Requires against an EL9 or
Amazon Linux 2023 repository, and systemd running the scriptlets' calls (the
unit itself is the .deb's, run under systemd by the `systemd` test).
"""
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys

import pytest

from deploy_env import deb_path, require, unavailable

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
FROM_DEB = ROOT / "deploy" / "package" / "from-deb.py"
RPM_ARCH = {"x86_64": "x86_64", "aarch64": "aarch64"}[os.environ.get("NUMAPROBE_ARCH", "x86_64")]
# path: (permissions, %{FILEFLAGS:fflags}); every file owned by root:root.
PAYLOAD = {
    "/usr/bin/numaprobe": ("-rwxr-xr-x", ""),
    "/usr/lib/systemd/system/numaprobe.service": ("-rw-r--r--", ""),
    "/etc/numaprobe": ("drwxr-xr-x", ""),
    "/etc/numaprobe/numaprobe.yaml": ("-rw-r--r--", "cn"),
    "/etc/default/numaprobe": ("-rw-r--r--", "cn"),
    "/usr/share/man/man8/numaprobe.8.gz": ("-rw-r--r--", "d"),
    "/usr/share/doc/numaprobe/NOTICE": ("-rw-r--r--", "d"),
    "/usr/share/doc/numaprobe/numaprobe.reference.yaml": ("-rw-r--r--", "d"),
    "/usr/share/licenses/numaprobe/LICENSE": ("-rw-r--r--", "l"),
}
CONFIG = "/etc/numaprobe/numaprobe.yaml"
DEFAULTS = "/etc/default/numaprobe"


def sh(*cmd, check=True, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=kw.pop("timeout", 600), **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"`{' '.join(map(str, cmd))}` exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


@pytest.fixture(scope="module")
def rpm_file():
    require("rpm")
    path = os.environ.get("NUMAPROBE_RPM")
    if not path:
        unavailable("NUMAPROBE_RPM is not set (ctest sets it)")
    if not os.path.isfile(path):
        unavailable(f"{path} does not exist: the release_build test makes it (ctest -L package)")
    return path


def query(rpm_file, fmt):
    return sh("rpm", "-qp", "--qf", fmt, rpm_file).stdout


def test_header(rpm_file):
    version = os.environ["NUMAPROBE_VERSION"]
    assert query(rpm_file, "%{NAME} %{VERSION} %{RELEASE} %{ARCH} %{LICENSE}") == \
        f"numaprobe {version} 1 {RPM_ARCH} Apache-2.0"
    assert os.path.basename(rpm_file) == f"numaprobe-{version}-1.{RPM_ARCH}.rpm"
    homepage = sh("dpkg-deb", "-f", deb_path(), "Homepage").stdout.strip()
    assert query(rpm_file, "%{URL}") == homepage


def test_bundled_libraries_are_provided(rpm_file):
    provides = sh("rpm", "-qp", "--provides", rpm_file).stdout
    for name in ("openssl", "zlib", "hwloc", "libnuma", "libxcrypt", "yaml-cpp", "prometheus-cpp", "spdlog", "fmt",
                 "libstdc++"):
        assert re.search(rf"^bundled\({re.escape(name)}\) = \S+$", provides, re.M), f"{name}:\n{provides}"


def test_requires_ask_for_glibc_2_34_at_most(rpm_file):
    requires = sh("rpm", "-qp", "--requires", rpm_file).stdout.splitlines()
    # rpmlib() features, the scriptlets' /bin/sh, rpm's own config() and rtld()
    # markers; the rest are the ELF files' libraries.
    libraries = [r for r in requires if not re.match(r"rpmlib\(|/bin/sh$|config\(numaprobe\) = |rtld\(GNU_HASH\)$", r)]
    assert libraries, requires
    for requirement in libraries:
        m = re.fullmatch(r"(libc\.so\.6|libm\.so\.6|libgcc_s\.so\.1|ld-linux-[\w-]+\.so\.\d)\(([\w.]*)\)(\(64bit\))?",
                         requirement)
        assert m, f"unexpected requirement {requirement!r}"
        v = re.fullmatch(r"GLIBC_(\d+)\.(\d+)", m.group(2))
        if v:
            assert (int(v.group(1)), int(v.group(2))) <= (2, 34), requirement


def test_payload_modes_owners_and_config_flags(rpm_file):
    listing = query(rpm_file, "[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILEFLAGS:fflags} %{FILENAMES}\n]")
    files = {}
    for line in listing.splitlines():
        perms, owner, flags, path = re.fullmatch(r"(\S+) (\S+) (\S*) ?(\S+)", line).groups()
        assert owner == "root:root", line
        files[path] = (perms, flags)
    assert files == PAYLOAD
    assert sh("rpm", "-qp", "--configfiles", rpm_file).stdout.split() == sorted([DEFAULTS, CONFIG])


def test_payload_digests(rpm_file):
    out = sh("rpm", "-K", "--nosignature", rpm_file).stdout
    assert "digests OK" in out, out


def test_scriptlets_are_shell(rpm_file, tmp_path):
    scripts = sh("rpm", "-qp", "--scripts", rpm_file).stdout
    parts = re.split(r"^(\w+) scriptlet \(using /bin/sh\):$", scripts, flags=re.M)
    names = parts[1::2]
    assert sorted(names) == ["postinstall", "postuninstall", "preuninstall"], scripts
    for name, body in zip(names, parts[2::2]):
        script = tmp_path / name
        script.write_text(body)
        sh("sh", "-n", script)


def test_rpmlint(rpm_file):
    """No errors, no warnings, with Debian's rpmlint 2.4 and the settings of
    deploy/package/rpmlintrc.toml: RPM distributions' conventions where
    Debian's defaults differ (gzip'd manual pages, SPDX license names), and
    three filters deploy/README.md justifies, which this test checks."""
    rpmlint = require("rpmlint")
    config = ROOT / "deploy" / "package" / "rpmlintrc.toml"
    filters = re.findall(r"^\s*'([a-z0-9-]+)',", config.read_text(), re.M)
    readme = (ROOT / "deploy" / "README.md").read_text()
    for tag in filters:
        assert f"`{tag}`" in readme, f"deploy/README.md does not justify the rpmlint filter {tag}"
    p = sh(rpmlint, "--config", config, rpm_file, check=False, timeout=300)
    out = p.stdout + p.stderr
    print(out)
    counts = re.search(r"(\d+) errors?, (\d+) warnings?", out)
    assert counts, out
    assert (int(counts.group(1)), int(counts.group(2))) == (0, 0), out
    assert p.returncode == 0, out


# --- rpm running the scriptlets --------------------------------------------------------------

def rebuilt(deb, version, tmp_path, template_note=None):
    """The RPM of the same .deb with another version (and, if given, a line
    added to the configuration templates), made by from-deb.py."""
    tree = tmp_path / f"tree-{version}"
    sh("dpkg-deb", "-R", deb, tree)
    control = tree / "DEBIAN" / "control"
    control.write_text(re.sub(r"^Version: .*$", f"Version: {version}", control.read_text(), flags=re.M))
    if template_note:
        for template in ("usr/share/numaprobe/numaprobe.yaml", "usr/share/numaprobe/default"):
            path = tree / template
            path.write_text(path.read_text() + f"# {template_note}\n")
    repacked = tmp_path / f"numaprobe_{version}.deb"
    sh("dpkg-deb", "--root-owner-group", "-b", tree, repacked)
    out = tmp_path / f"out-{version}"
    made = sh(sys.executable, FROM_DEB, repacked, "--out", out).stdout.split()
    return next(p for p in made if p.endswith(".rpm"))


@pytest.fixture
def rpm_root(tmp_path):
    """An empty rpm database in a root that has a shell (busybox) for the
    scriptlets and a systemctl that records its arguments."""
    if os.geteuid() != 0:
        unavailable("rpm runs the scriptlets chrooted: needs root")
    busybox = require("busybox")
    root = tmp_path / "root"
    (root / "usr/bin").mkdir(parents=True)
    (root / "var/log").mkdir(parents=True)
    (root / "dev").mkdir()
    os.mknod(root / "dev/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the scriptlets write to it
    (root / "bin").symlink_to("usr/bin")
    shutil.copy(busybox, root / "usr/bin/busybox")
    for tool in ("sh", "cat", "echo"):
        (root / "usr/bin" / tool).symlink_to("busybox")
    systemctl = root / "usr/bin/systemctl"
    systemctl.write_text("#!/bin/sh\necho \"$*\" >> /var/log/systemctl.calls\n")
    systemctl.chmod(0o755)
    sh("rpm", "--root", root, "--initdb")
    return root


def rpm_in(root, *args):
    # --nodeps: the root's rpm database has no C library package to satisfy
    # the Requires with (test_requires_ask_for_glibc_2_34_at_most reads them);
    # --ignorearch: an aarch64 package on this x86-64 machine.
    forced = ["--ignorearch"] if args[0] in ("-i", "-U") else []
    return sh("rpm", "--root", root, "--nodeps", *forced, *args, stdin=subprocess.DEVNULL)


def calls(root):
    path = root / "var/log/systemctl.calls"
    lines = path.read_text().splitlines() if path.exists() else []
    path.unlink(missing_ok=True)
    return lines


def test_install_upgrade_erase_keep_the_configuration(rpm_file, rpm_root, tmp_path):
    root = rpm_root
    version = os.environ["NUMAPROBE_VERSION"]
    rpm_in(root, "-i", rpm_file)
    assert sh("rpm", "--root", root, "-q", "numaprobe").stdout.strip() == f"numaprobe-{version}-1.{RPM_ARCH}"
    assert calls(root) == ["daemon-reload", "--no-reload preset numaprobe.service"]
    for path in PAYLOAD:
        assert os.path.lexists(root / path.lstrip("/")), path
    rpm_in(root, "-V", "numaprobe")  # payload as recorded

    conf, defaults = root / CONFIG.lstrip("/"), root / DEFAULTS.lstrip("/")
    conf.write_text(conf.read_text() + "schedule:\n  interval: 7m\n")
    defaults.write_text(defaults.read_text().replace('ARGS=""', 'ARGS="--log.level=debug"'))
    edited = {conf: conf.read_text(), defaults: defaults.read_text()}

    # An upgrade with the same templates: the edits stay, nothing beside them.
    deb = deb_path()
    rpm_in(root, "-U", rebuilt(deb, version + "+rpmtest1", tmp_path))
    assert calls(root) == ["daemon-reload", "try-restart numaprobe.service"]
    for path, text in edited.items():
        assert path.read_text() == text
        assert not path.with_name(path.name + ".rpmnew").exists()

    # An upgrade whose templates changed: the edits stay, the new templates
    # wait beside them as .rpmnew (rpm never asks).
    rpm_in(root, "-U", rebuilt(deb, version + "+rpmtest2", tmp_path, template_note="changed in the next release"))
    for path, text in edited.items():
        assert path.read_text() == text
        assert path.with_name(path.name + ".rpmnew").read_text().endswith("# changed in the next release\n")
    calls(root)

    # Erase: the service stopped and disabled, the program gone, the edited
    # configuration kept as .rpmsave.
    rpm_in(root, "-e", "numaprobe")
    assert calls(root) == ["--no-reload disable --now numaprobe.service", "daemon-reload"]
    assert not (root / "usr/bin/numaprobe").exists()
    for path, text in edited.items():
        assert path.with_name(path.name + ".rpmsave").read_text() == text
