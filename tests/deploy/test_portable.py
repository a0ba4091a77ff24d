# SPDX-License-Identifier: Apache-2.0
"""The portable binary in every package (ctest entry `portable`, label
`package`): what the release tarball and the RPM that
deploy/package/from-deb.py makes from the .deb hold, and that the binary runs
on other distributions' C libraries.

* Every ELF file each package ships needs no glibc symbol version newer than
  GLIBC_2.34 (EL9, Amazon Linux 2023; Ubuntu 22.04 has 2.35, Debian 12 2.36)
  and loads nothing but libc, libm, the loader and libgcc_s; the check is
  shown to fail on a program that needs glibc 2.36.
* The .deb, the tarball and the RPM carry the same binary (one build).
* The tarball's layout, as node_exporter's.
* The tarball's binary probes and serves inside a root holding Debian 13's
  C library (glibc 2.41) and nothing else (mmdebstrap --variant=extract
  --include=libc6: libc6 and what it depends on, libgcc-s1), and is refused
  by Debian 11's (glibc 2.31), which shows the root's own libc is the one
  loaded. An arm64 build runs there under qemu-user (binfmt_misc); it serves
  and is scraped, but does not probe: qemu-user implements no NUMA system
  calls.

What cannot be shown here: a real EL9 or Amazon Linux userland (no RPM
distribution's packages are reachable; only the C library matters to the
binary, and the symbol versions prove it against glibc 2.34's), and arm64
hardware (emulated).

Environment (ctest sets it): NUMAPROBE_DEB, NUMAPROBE_TARBALL, NUMAPROBE_RPM,
NUMAPROBE_VERSION, NUMAPROBE_ARCH. Roots are cached in
~/.cache/numaprobe-deploy/roots (NUMAPROBE_DEPLOY_CACHE).
"""
import hashlib
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import time
import urllib.request

import pytest

from deploy_env import deb_path, require, unavailable

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
GLIBC_MAX = (2, 34)
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
DEB_ARCH, GO_ARCH, RPM_ARCH = {"x86_64": ("amd64", "amd64", "x86_64"),
                               "aarch64": ("arm64", "arm64", "aarch64")}[os.environ.get("NUMAPROBE_ARCH", "x86_64")]
NATIVE = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip() == DEB_ARCH
NEWER_SUITE = "trixie"    # Debian 13, glibc 2.41
OLDER_SUITE = "bullseye"  # Debian 11, glibc 2.31: older than 2.34
TARBALL_FILES = {"numaprobe": 0o755, "LICENSE": 0o644, "NOTICE": 0o644, "numaprobe.yaml": 0o644,
                 "numaprobe.reference.yaml": 0o644, "numaprobe.service": 0o644, "numaprobe.default": 0o644,
                 "numaprobe.8": 0o644}
SERVE_CONFIG = """\
probes:
  latency: {buffer_size: 16MiB, samples: 5, loads_per_sample: 5000}
  bandwidth: {enabled: false}
  core_to_core: {enabled: false}
schedule: {duty_cycle: 0.2, interval: 1s, jitter: 0.1}
baseline: {rounds: 1}
state_directory: /var/lib/numaprobe
probe_lock_file: /run/lock/numaprobe.lock
"""


def sh(*cmd, check=True, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=kw.pop("timeout", 600), **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"`{' '.join(map(str, cmd))}` exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def env_file(name, what):
    path = os.environ.get(name)
    if not path:
        unavailable(f"{name} is not set (ctest sets it)")
    if not os.path.isfile(path):
        unavailable(f"{path} does not exist: the release_build test makes {what} (ctest -L package)")
    return pathlib.Path(path)


# --- what the packages hold ---------------------------------------------------------------

@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    """{package kind: directory with its files}, each unpacked by its own tools."""
    require("dpkg-deb")
    require("rpm2cpio")
    require("cpio")
    top = tmp_path_factory.mktemp("packages")
    trees = {kind: top / kind for kind in ("deb", "tarball", "rpm")}
    sh("dpkg-deb", "-x", deb_path(), trees["deb"])
    with tarfile.open(env_file("NUMAPROBE_TARBALL", "the tarball")) as tar:
        tar.extractall(trees["tarball"])
    trees["rpm"].mkdir()
    sh("sh", "-c", f"rpm2cpio {env_file('NUMAPROBE_RPM', 'the RPM')} | cpio -idm --quiet", cwd=trees["rpm"])
    return trees


def elf_files(tree):
    found = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and not p.is_symlink()):
        with open(path, "rb") as f:
            if f.read(4) == b"\x7fELF":
                found.append(path)
    return found


def glibc_versions(path):
    """The GLIBC_x.y versions `path` needs (its .gnu.version_r), as tuples."""
    out = sh("readelf", "-V", "-W", path).stdout
    return {tuple(int(n) for n in m.groups()) for m in re.finditer(r"Name: GLIBC_(\d+)\.(\d+)(?:\.\d+)?\s", out)}


def needed(path):
    return set(re.findall(r"\(NEEDED\).*\[(.+)\]", sh("readelf", "-d", "-W", path).stdout))


@pytest.mark.parametrize("kind", ["deb", "tarball", "rpm"])
def test_every_shipped_elf_needs_glibc_2_34_at_most(unpacked, kind):
    elves = elf_files(unpacked[kind])
    assert elves, f"no ELF file in the {kind}"
    for path in elves:
        versions = glibc_versions(path)
        assert versions, f"{path.name}: no GLIBC_ version needed at all? readelf -V found none"
        newest = max(versions)
        print(f"{kind}: {path.relative_to(unpacked[kind])} needs GLIBC_{newest[0]}.{newest[1]}")
        assert newest <= GLIBC_MAX, f"{kind}: {path.name} needs GLIBC_{newest[0]}.{newest[1]}, newer than 2.34"
        assert needed(path) <= ALLOWED_NEEDED, f"{kind}: {path.name} loads {needed(path) - ALLOWED_NEEDED}"


def test_the_glibc_check_fails_on_a_program_that_needs_glibc_2_36(tmp_path):
    """The check above is not vacuous: arc4random came with glibc 2.36."""
    if not NATIVE:
        pytest.skip("compiled with the host's compiler: the native build's test shows it")
    source = tmp_path / "new.cc"
    source.write_text("#include <stdlib.h>\nint main() { return static_cast<int>(arc4random() & 1); }\n")
    sh(shutil.which("g++") or "g++", "-o", tmp_path / "new", source)
    assert max(glibc_versions(tmp_path / "new")) == (2, 36)


def test_every_package_carries_the_same_binary(unpacked):
    paths = {"deb": "usr/bin/numaprobe", "tarball": f"{tarball_top()}/numaprobe", "rpm": "usr/bin/numaprobe"}
    digests = {kind: hashlib.sha256((unpacked[kind] / rel).read_bytes()).hexdigest() for kind, rel in paths.items()}
    assert len(set(digests.values())) == 1, digests


def tarball_top():
    return f"numaprobe-{os.environ['NUMAPROBE_VERSION']}.linux-{GO_ARCH}"


def test_tarball_layout():
    path = env_file("NUMAPROBE_TARBALL", "the tarball")
    assert path.name == f"{tarball_top()}.tar.gz"
    with tarfile.open(path) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert set(members) == {tarball_top()} | {f"{tarball_top()}/{n}" for n in TARBALL_FILES}, sorted(members)
        for name, mode in TARBALL_FILES.items():
            m = members[f"{tarball_top()}/{name}"]
            assert m.isfile() and m.mode == mode and (m.uid, m.gid) == (0, 0), (name, oct(m.mode), m.uid)
        read = lambda name: tar.extractfile(f"{tarball_top()}/{name}").read()  # noqa: E731
        assert read("LICENSE") == (ROOT / "LICENSE").read_bytes()
        assert read("NOTICE") == (ROOT / "NOTICE").read_bytes()
        assert read("numaprobe.yaml") == (ROOT / "config/numaprobe.yaml").read_bytes()
        assert read("numaprobe.reference.yaml") == (ROOT / "docs/numaprobe.reference.yaml").read_bytes()
        assert read("numaprobe.service") == (ROOT / "deploy/systemd/numaprobe.service").read_bytes()
        assert read("numaprobe.default") == (ROOT / "deploy/systemd/numaprobe.default").read_bytes()
        assert read("numaprobe.8") == (ROOT / "docs/numaprobe.8").read_bytes()


# --- another distribution's C library -----------------------------------------------------

def debian_mirror():
    """The Debian mirror apt uses here (apt-cache policy)."""
    out = sh("apt-cache", "policy").stdout
    m = re.search(r"^\s+\d+ (https?://\S+) bookworm/main ", out, re.M)
    if not m:
        unavailable("no Debian bookworm mirror in apt's configuration")
    return m.group(1)


def libc_root(suite):
    """A root holding `suite`'s libc6 and what it depends on, nothing else;
    made once by mmdebstrap and cached."""
    require("mmdebstrap")
    cache = pathlib.Path(os.environ.get("NUMAPROBE_DEPLOY_CACHE") or
                         pathlib.Path.home() / ".cache" / "numaprobe-deploy") / "roots" / f"{suite}-{DEB_ARCH}"
    if (cache / ".complete").exists():
        return cache
    shutil.rmtree(cache, ignore_errors=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    # merged-usr as Debian 12 and later are (the loader's path is /lib64/... in
    # the binary, /usr/lib64/... in the package); the hook makes the links.
    hooks = ["--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr"] if suite != OLDER_SUITE else []
    sh("mmdebstrap", "--variant=extract", f"--architectures={DEB_ARCH}", "--include=libc6", *hooks, suite, cache,
       f"deb {debian_mirror()} {suite} main", timeout=900)
    (cache / ".complete").write_text(f"{suite} libc6, {time.monotonic() - t0:.0f} s\n")
    return cache


def in_root(root, *cmd):
    """The command line that runs `cmd` chrooted into `root` with /proc, /sys
    and /dev, in a mount namespace of its own (the mounts go with it)."""
    script = (f"mount -t proc proc {root}/proc && mount --rbind /sys {root}/sys && mount --rbind /dev {root}/dev "
              f"&& exec chroot {root} \"$@\"")
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "in-root", *map(str, cmd)]


def install_tarball(root):
    """The tarball unpacked into the root's /opt, as an operator would."""
    opt = root / "opt"
    shutil.rmtree(opt, ignore_errors=True)
    opt.mkdir()
    with tarfile.open(env_file("NUMAPROBE_TARBALL", "the tarball")) as tar:
        tar.extractall(opt)
    for d in ("proc", "sys", "dev", "run/lock", "var/lib/numaprobe", "etc/numaprobe"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "etc/numaprobe/numaprobe.yaml").write_text(SERVE_CONFIG)
    shutil.rmtree(root / "var/lib/numaprobe")
    (root / "var/lib/numaprobe").mkdir()
    return f"/opt/{tarball_top()}/numaprobe"


@pytest.fixture(scope="module")
def root_tools():
    if os.geteuid() != 0:
        unavailable("chroot and mounts need root")
    for tool in ("unshare", "chroot", "mount"):
        require(tool)
    if not NATIVE and not pathlib.Path(f"/proc/sys/fs/binfmt_misc/qemu-{RPM_ARCH}").exists():
        unavailable(f"no binfmt_misc entry for qemu-{RPM_ARCH}: an {DEB_ARCH} root cannot run here "
                    "(.ci/install-deps registers it)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def root_libc_version(root):
    out = sh(*in_root(root, f"/usr/lib/{ {'amd64': 'x86_64', 'arm64': 'aarch64'}[DEB_ARCH]}-linux-gnu/libc.so.6"),
             check=False).stdout
    m = re.search(r"release version (\d+\.\d+)", out)
    assert m, out
    return m.group(1)


def test_probes_in_a_root_with_only_debian_13s_libc(root_tools):
    if not NATIVE:
        pytest.skip("qemu-user implements no NUMA system calls: the probe needs a real kernel (tests/vm)")
    root = libc_root(NEWER_SUITE)
    binary = install_tarball(root)
    assert root_libc_version(root) == "2.41"
    p = sh(*in_root(root, binary, "probe", "--tests", "latency", "--lock-file", "", "--format", "json"),
           check=False, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    report = json.loads(p.stdout)
    figures = report["latency"]
    assert figures, report
    for figure in figures:
        # ok, or disturbed by a busy machine (counted); either way measured
        # on a buffer verified on its node.
        assert figure["outcome"] in ("ok", "disturbed"), figure
        assert figure["buffer"]["placement"]["verified"] is True, figure
    assert any(f["outcome"] == "ok" for f in figures) or p.returncode == 1


def test_serves_in_a_root_with_only_debian_13s_libc(root_tools):
    root = libc_root(NEWER_SUITE)
    binary = install_tarball(root)
    port = free_port()
    proc = subprocess.Popen(in_root(root, binary, "serve", "--config.file=/etc/numaprobe/numaprobe.yaml",
                                    f"--web.listen-address=127.0.0.1:{port}"),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # Under qemu-user (an arm64 build) a start takes seconds.
        deadline = time.monotonic() + (60 if NATIVE else 180)
        want = r"^numaprobe_memory_latency_seconds\{" if NATIVE else r"^numaprobe_build_info\{"
        body = ""
        while not re.search(want, body, re.M):
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, f"no {want} within the limit:\n{body[-2000:]}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    body = r.read().decode()
            except OSError:
                pass
            time.sleep(0.5)
        assert f'version="{os.environ["NUMAPROBE_VERSION"]}"' in body
        # What the process mapped (seen from here, with the root's path in
        # front): the root's C library, libm, loader and libgcc_s, nothing else.
        maps = pathlib.Path(f"/proc/{proc.pid}/maps").read_text()
        libraries = {line.split()[-1] for line in maps.splitlines() if ".so" in line.split()[-1]}
        assert libraries, maps
        inside = os.path.realpath(root) + "/"
        assert all(lib.startswith(inside) for lib in libraries), libraries
        assert {pathlib.Path(lib).name for lib in libraries} <= ALLOWED_NEEDED, libraries
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert rc == 0, proc.stdout.read()


def test_debian_11s_older_libc_refuses_it(root_tools):
    """The root's own libc is what runs the binary: glibc 2.31 lacks 2.32-2.34."""
    if not NATIVE:
        pytest.skip("the native build's test shows it")
    root = libc_root(OLDER_SUITE)
    binary = install_tarball(root)
    p = sh(*in_root(root, binary, "--version"), check=False)
    assert p.returncode != 0, p.stdout
    assert re.search(r"version `GLIBC_2\.3[234]' not found", p.stderr), p.stderr


# --- the tarball's install, upgrade and uninstall, as deploy/README.md writes them -----------

def tarball_procedures():
    """{"install": script, "upgrade": ..., "uninstall": ...}: the three sh
    blocks of deploy/README.md's "Release tarball and RPM", in order."""
    text = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Release tarball and RPM\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"\n(Install|Upgrade|Uninstall) \(.*?\n\n```sh\n(.*?)```", section, re.S)
    procedures = {name.lower(): script for name, script in blocks}
    assert list(procedures) == ["install", "upgrade", "uninstall"], list(procedures)
    return procedures


def run_procedure(script, root, directory, calls):
    """`script` as an operator runs it in the unpacked `directory`, with
    every absolute path under `root` instead of / (the binaries are the
    host's: the root has a C library and nothing else) and systemctl
    recorded in `calls`."""
    rooted = re.sub(r"(?<![\w.-])/(usr|etc|var)/", lambda m: f"{root}/{m.group(1)}/", script)
    prelude = f'systemctl() {{ echo "$*" >> {calls}; }}\nset -e\n'
    sh("sh", "-c", prelude + rooted, cwd=directory)


def test_the_tarball_procedures_leave_what_they_say(root_tools, tmp_path):
    """Install, upgrade and uninstall exactly as deploy/README.md writes them,
    into a copy of the Debian 13 root: each leaves the files it says (the
    .deb's places, so the unit's /usr/bin/numaprobe is the binary), keeps an
    edited /etc file, and the installed binary checks the installed
    configuration inside the root."""
    procedures = tarball_procedures()
    root = tmp_path / "root"
    # cp -a: the root's /dev holds device nodes, which a file copy would read
    # (/dev/zero and /dev/full never end).
    sh("cp", "-a", libc_root(NEWER_SUITE), root)
    # A host numaprobe was never installed on (the other tests of this file
    # leave their configuration in the cached root).
    for leftover in ("etc/numaprobe", "etc/default/numaprobe", "opt", "var/lib/numaprobe"):
        sh("rm", "-rf", root / leftover)
    with tarfile.open(env_file("NUMAPROBE_TARBALL", "the tarball")) as tar:
        tar.extractall(tmp_path)
    unpacked = tmp_path / tarball_top()
    calls = tmp_path / "systemctl-calls"
    shipped = {"usr/bin/numaprobe": ("numaprobe", 0o755),
               "usr/lib/systemd/system/numaprobe.service": ("numaprobe.service", 0o644),
               "usr/share/man/man8/numaprobe.8": ("numaprobe.8", 0o644),
               "usr/share/doc/numaprobe/numaprobe.reference.yaml": ("numaprobe.reference.yaml", 0o644)}
    site = {"etc/numaprobe/numaprobe.yaml": "numaprobe.yaml", "etc/default/numaprobe": "numaprobe.default"}

    run_procedure(procedures["install"], root, unpacked, calls)
    for path, (name, mode) in {**shipped, **{p: (n, 0o644) for p, n in site.items()}}.items():
        assert (root / path).read_bytes() == (unpacked / name).read_bytes(), path
        assert (root / path).stat().st_mode & 0o7777 == mode, path
    assert calls.read_text().splitlines() == ["daemon-reload", "enable --now numaprobe"]
    unit = (root / "usr/lib/systemd/system/numaprobe.service").read_text()
    assert "ExecStart=/usr/bin/numaprobe serve --config.file=/etc/numaprobe/numaprobe.yaml" in unit
    for d in ("proc", "sys", "dev"):
        (root / d).mkdir(exist_ok=True)
    p = sh(*in_root(root, "/usr/bin/numaprobe", "check-config", "--syntax-only", "/etc/numaprobe/numaprobe.yaml"),
           timeout=300)
    assert "is valid" in p.stdout, p.stdout

    # An upgrade over an edited configuration keeps the edit.
    edited = (root / "etc/numaprobe/numaprobe.yaml").read_text() + "\n# edited on this host\n"
    (root / "etc/numaprobe/numaprobe.yaml").write_text(edited)
    (root / "usr/bin/numaprobe").write_bytes(b"an older binary")
    calls.unlink()
    run_procedure(procedures["upgrade"], root, unpacked, calls)
    assert (root / "usr/bin/numaprobe").read_bytes() == (unpacked / "numaprobe").read_bytes()
    assert (root / "etc/numaprobe/numaprobe.yaml").read_text() == edited
    assert calls.read_text().splitlines() == ["daemon-reload", "try-restart numaprobe"]

    calls.unlink()
    run_procedure(procedures["uninstall"], root, unpacked, calls)
    left = [path for path in shipped if (root / path).exists()]
    assert not left, left
    assert not (root / "usr/share/doc/numaprobe").exists()
    assert (root / "etc/numaprobe/numaprobe.yaml").read_text() == edited, "the configuration is kept"
    assert (root / "etc/default/numaprobe").exists()
    assert calls.read_text().splitlines() == ["disable --now numaprobe", "daemon-reload"]
