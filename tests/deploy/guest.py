# SPDX-License-Identifier: Apache-2.0
"""Debian 12 guests made from the Debian archive with mmdebstrap, cached, for
the deploy tests (label systemd).

`vm_image(packages)`: a bootable Debian 12 root filesystem (systemd as init,
Debian's cloud kernel and its initramfs) as a raw ext4 image plus the kernel
and initrd beside it, and `boot_selftest()` which boots it in QEMU (KVM when
/dev/kvm is usable, TCG otherwise) with a second disk holding a test script,
and returns what the script sent back on the second serial port.

The image is built once per recipe and kept in $NUMAPROBE_DEPLOY_CACHE (default
~/.cache/numaprobe-deploy); the key is a hash of the recipe, so a changed
package list builds a new one and old entries are removed. Nothing here is
specific to numaprobe's sources: callers pass packages and scripts.

Raises Unavailable for a missing host tool (tests skip, or fail when CI=true)
and GuestError when a build or a guest misbehaves (always a failure).
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vm"))
import vmharness  # noqa: E402  (result channel format shared with tests/vm)

SUITE = "bookworm"
MIRRORS = (
    "deb http://deb.debian.org/debian bookworm main",
    "deb http://deb.debian.org/debian bookworm-updates main",
    "deb http://deb.debian.org/debian-security bookworm-security main",
)
# Leave documentation out of every image (as debian:bookworm-slim does).
DPKG_EXCLUDES = (
    "path-exclude=/usr/share/man/*", "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright", "path-exclude=/usr/share/locale/*",
    "path-exclude=/usr/share/info/*", "path-exclude=/usr/share/lintian/*",
)
MERGED_USR_HOOKS = "/usr/share/mmdebstrap/hooks/merged-usr"
# Bump when a recipe changes in a way its inputs do not show.
RECIPE_VERSION = 3


class Unavailable(RuntimeError):
    """A host tool is missing: skip locally, fail in CI."""


class GuestError(RuntimeError):
    """An image build failed or a guest did not do what it was told."""


def cache_root() -> Path:
    return Path(os.environ.get("NUMAPROBE_DEPLOY_CACHE") or Path.home() / ".cache" / "numaprobe-deploy")


def require(*tools: str) -> dict[str, str]:
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    found = {t: shutil.which(t, path=path) for t in tools}
    missing = [t for t, p in found.items() if not p]
    if missing:
        raise Unavailable(f"missing host tools: {', '.join(missing)} (run .ci/install-deps as root)")
    return found


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _run(cmd, what, timeout=1800, **kw):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if p.returncode != 0:
        raise GuestError(f"{what}: `{' '.join(map(str, cmd))}` exited {p.returncode}:\n"
                         + (p.stderr or p.stdout)[-3000:])
    return p, time.monotonic() - t0


def _cached(kind: str, recipe: dict, build) -> tuple[Path, bool]:
    """The directory holding the artefact for `recipe`, building it with
    build(tmpdir) the first time. Returns (dir, built_now)."""
    key = hashlib.sha256(json.dumps({**recipe, "v": RECIPE_VERSION}, sort_keys=True).encode()).hexdigest()[:16]
    root = cache_root()
    final = root / f"{kind}-{key}"
    with _locked(root / f".{kind}.lock"):
        if (final / "recipe.json").is_file():
            return final, False
        for old in root.glob(f"{kind}-*"):  # one entry per kind: images are large
            shutil.rmtree(old, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=root))
        try:
            build(tmp)
            (tmp / "recipe.json").write_text(json.dumps(recipe, indent=1, sort_keys=True) + "\n")
            os.replace(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return final, True


def _mmdebstrap(target: str, variant: str, include=(), extra=(), timeout=1800):
    tools = require("mmdebstrap")
    cmd = [tools["mmdebstrap"], f"--variant={variant}", f"--hook-dir={MERGED_USR_HOOKS}",
           *[f"--dpkgopt={o}" for o in DPKG_EXCLUDES],
           '--aptopt=Dir::Cache::pkgcache "";', '--aptopt=Dir::Cache::srcpkgcache "";']
    if include:
        cmd.append("--include=" + ",".join(include))
    cmd += [*extra, SUITE, target, *MIRRORS]
    return _run(cmd, "mmdebstrap", timeout=timeout)[1]


# ------------------------------------------------------------------------- VM

GUEST_BASE_PACKAGES = ("systemd-sysv", "udev", "linux-image-cloud-amd64", "initramfs-tools",
                       "curl", "procps")

SELFTEST_UNIT = """\
[Unit]
Description=Runs /selftest/run.sh from the second disk and reports on ttyS1
After=multi-user.target
ConditionPathExists=/dev/vdb

[Service]
Type=simple
ExecStart=/bin/sh -c 'mkdir -p /selftest && mount -o ro /dev/vdb /selftest && exec /bin/bash /selftest/run.sh'
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
"""

# Kernel modules the guest's systemd loads at every boot and numaprobe never
# needs (device mapper, FUSE, loop devices, EFI pstore, configfs): under TCG
# each modprobe@ unit took 3-7 s of the boot (systemd-analyze blame).
MASKED_AT_BOOT = " ".join(f"systemd.mask=modprobe@{m}.service" for m in
                          ("dm_mod", "fuse", "loop", "efi_pstore", "configfs"))

CUSTOMIZE = r"""
set -e
root="$1"
echo numaprobe-guest > "$root/etc/hostname"
printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' > "$root/etc/fstab"
cat > "$root/etc/systemd/system/numaprobe-selftest.service" <<'EOF'
__UNIT__
EOF
chroot "$root" systemctl enable numaprobe-selftest.service
# Nothing in the guest may wait for a network or run maintenance under TCG.
for t in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
         fstrim.timer dpkg-db-backup.timer systemd-networkd-wait-online.service \
         getty-static.service getty@tty1.service; do
  chroot "$root" systemctl mask "$t" >/dev/null 2>&1 || true
done
# A throw-away guest: no fsync per file in dpkg (the disk is a snapshot anyway).
echo force-unsafe-io > "$root/etc/dpkg/dpkg.cfg.d/unsafe-io"
# A smaller initramfs boots faster under TCG: just what finds the root disk.
sed -i 's/^MODULES=.*/MODULES=list/' "$root/etc/initramfs-tools/initramfs.conf"
printf 'virtio_pci\nvirtio_blk\next4\n' >> "$root/etc/initramfs-tools/modules"
chroot "$root" update-initramfs -u -k all >/dev/null
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=persistent\n' > "$root/etc/systemd/journald.conf.d/selftest.conf"
"""


@dataclasses.dataclass(frozen=True)
class VmImage:
    dir: Path
    rootfs: Path
    kernel: Path
    initrd: Path
    built_seconds: float | None  # None: from the cache


def vm_image(packages: list[str]) -> VmImage:
    """Root filesystem with systemd as init, the cloud kernel, `packages` and a
    numaprobe-selftest.service that runs /selftest/run.sh from /dev/vdb."""
    tools = require("mmdebstrap", "mkfs.ext4")
    include = sorted(set(GUEST_BASE_PACKAGES) | set(packages))
    recipe = {"suite": SUITE, "mirrors": MIRRORS, "dpkg": DPKG_EXCLUDES, "variant": "apt",
              "include": include, "customize": CUSTOMIZE, "unit": SELFTEST_UNIT}
    seconds = {}

    def build(tmp: Path):
        t0 = time.monotonic()
        root = tmp / "root"
        root.mkdir()
        hook = tmp / "customize.sh"
        hook.write_text(CUSTOMIZE.replace("__UNIT__", SELFTEST_UNIT.rstrip("\n")))
        _mmdebstrap(str(root) + "/", "apt", include=include,
                    extra=[f"--customize-hook=sh {hook} \"$1\""])
        kernels = sorted((root / "boot").glob("vmlinuz-*"))
        initrds = sorted((root / "boot").glob("initrd.img-*"))
        if len(kernels) != 1 or len(initrds) != 1:
            raise GuestError(f"expected one kernel and initrd in the image, found {kernels} {initrds}")
        shutil.copyfile(kernels[0], tmp / "vmlinuz")
        shutil.copyfile(initrds[0], tmp / "initrd.img")
        # ext4 populated from the directory (no loop device, no mount); owners
        # and modes are taken from the files. Sparse: ~700 MB used of 3 GiB.
        _run([tools["mkfs.ext4"], "-q", "-F", "-L", "root", "-d", str(root), str(tmp / "rootfs.raw"), "3G"],
             "mkfs.ext4")
        shutil.rmtree(root)
        seconds["s"] = time.monotonic() - t0

    path, built = _cached("vm-image", recipe, build)
    return VmImage(path, path / "rootfs.raw", path / "vmlinuz", path / "initrd.img",
                   seconds.get("s") if built else None)


def kvm_usable() -> tuple[bool, str]:
    """Whether /dev/kvm opens read-write and answers KVM_GET_API_VERSION."""
    try:
        fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return False, f"/dev/kvm: {e.strerror}"
    try:
        version = fcntl.ioctl(fd, 0xAE00)  # KVM_GET_API_VERSION
    except OSError as e:
        return False, f"KVM_GET_API_VERSION: {e.strerror}"
    finally:
        os.close(fd)
    return (version == 12, f"KVM API version {version}")


KVM_CPU = "max,-arch-capabilities"
KVM_PROBE_SECONDS = 10


def kvm_boots(kernel: Path) -> tuple[bool, str]:
    """Whether `kernel` starts under KVM: its first console line within
    KVM_PROBE_SECONDS (it takes well under a second when KVM works). On these
    nested hosts /dev/kvm answers but a guest kernel hangs before printing
    anything (QEMU also warns that the host lacks SSE3 for kvm64)."""
    tools = require("qemu-system-x86_64")
    with tempfile.TemporaryDirectory(prefix="numaprobe-kvm-probe-") as tmp:
        log = Path(tmp) / "console.log"
        proc = subprocess.Popen(
            [tools["qemu-system-x86_64"], "-accel", "kvm", "-cpu", KVM_CPU, "-m", "256", "-smp", "1",
             "-kernel", str(kernel), "-append", "console=ttyS0 earlyprintk=serial,ttyS0 panic=-1",
             "-no-reboot", "-nographic", "-monitor", "none", "-nic", "none", "-serial", f"file:{log}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + KVM_PROBE_SECONDS
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                if log.exists() and b"Linux version" in log.read_bytes():
                    return True, "KVM boots the guest kernel"
                time.sleep(0.2)
        finally:
            proc.kill()
            out = proc.communicate()[0].decode(errors="replace").strip()
    return False, (f"/dev/kvm works but the guest kernel printed nothing within {KVM_PROBE_SECONDS} s "
                   f"under KVM{': ' + out[-300:] if out else ''}")


def choose_accel(kernel: Path) -> tuple[str, str]:
    """("kvm"|"tcg", why): KVM if /dev/kvm is usable and boots `kernel`,
    TCG otherwise. $NUMAPROBE_SYSTEMD_ACCEL=kvm|tcg forces one."""
    forced = os.environ.get("NUMAPROBE_SYSTEMD_ACCEL", "").strip()
    if forced in ("kvm", "tcg"):
        return forced, "forced by NUMAPROBE_SYSTEMD_ACCEL"
    ok, why = kvm_usable()
    if ok:
        ok, why = kvm_boots(kernel)
    return ("kvm", why) if ok else ("tcg", why)


@dataclasses.dataclass
class BootResult:
    accel: str
    seconds: float
    results: dict  # name -> vmharness.ScenarioResult
    console: str

    def __getitem__(self, name):
        if name not in self.results:
            raise GuestError(f"the guest sent no result {name!r}; it sent {sorted(self.results)}\n"
                             + vmharness.console_tail(self.console, 60))
        return self.results[name]


def boot_selftest(image: VmImage, files: dict[str, Path | bytes], workdir: Path, accel: str,
                  timeout: float, memory_mib: int = 2048, cpus: int = 2) -> BootResult:
    """Boots `image` (changes go to a throw-away overlay, the cached image is
    never written) with a second disk holding `files` (run.sh among them),
    until the guest powers off. Reboots inside the guest keep the overlay."""
    tools = require("qemu-system-x86_64", "mkfs.ext4")
    if "run.sh" not in files:
        raise ValueError("files must contain run.sh")
    disk_dir = workdir / "selftest"
    disk_dir.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        target = disk_dir / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            shutil.copyfile(content, target)
    disk = workdir / "selftest.img"
    _run([tools["mkfs.ext4"], "-q", "-F", "-L", "selftest", "-d", str(disk_dir), str(disk), "256M"], "mkfs.ext4")
    console_path, channel_path = workdir / "console.log", workdir / "results.log"
    channel_path.write_bytes(b"")
    # `-cpu host` aborts on these nested KVM hosts (the host refuses MSR
    # 0x10a, IA32_ARCH_CAPABILITIES); `max` minus that feature starts.
    cpu = KVM_CPU if accel == "kvm" else "max"
    cmd = [tools["qemu-system-x86_64"], "-accel", accel, "-cpu", cpu, "-m", str(memory_mib),
           "-smp", str(cpus), "-kernel", str(image.kernel), "-initrd", str(image.initrd),
           "-append", "root=/dev/vda rw console=ttyS0 panic=-1 quiet systemd.show_status=0 " + MASKED_AT_BOOT,
           # Writes go to a temporary overlay (snapshot=on) that dies with QEMU:
           # flushes need not reach the host's disk (cache=unsafe).
           "-drive", f"file={image.rootfs},if=virtio,format=raw,snapshot=on,cache=unsafe",
           "-drive", f"file={disk},if=virtio,format=raw,readonly=on",
           "-nographic", "-monitor", "none", "-nic", "none",
           "-serial", f"file:{console_path}", "-serial", f"file:{channel_path}"]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        timed_out = True
    seconds = time.monotonic() - t0
    console = console_path.read_bytes().decode(errors="replace") if console_path.exists() else ""
    channel = channel_path.read_bytes().decode(errors="replace")
    results, done = vmharness.parse_results(channel)
    where = f"accel {accel}, after {seconds:.0f} s, results sent: {sorted(results) or 'none'}"
    if timed_out:
        raise GuestError(f"guest timed out (limit {timeout:.0f} s); {where}\n"
                         + vmharness.console_tail(console, 60))
    if proc.returncode != 0 or not done:
        raise GuestError(f"guest stopped before finishing (QEMU exit {proc.returncode}"
                         f"{': ' + out.decode(errors='replace')[-1000:] if out else ''}); {where}\n"
                         + vmharness.console_tail(console, 60))
    return BootResult(accel, seconds, results, console)
