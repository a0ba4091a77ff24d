# SPDX-License-Identifier: Apache-2.0
"""Boots numaprobe inside QEMU guests that have a NUMA topology of their own.

The build and CI machines have one NUMA node; a software-emulated (TCG) guest with
`-numa` options runs a stock Debian kernel that sees several nodes, CPU-less memory
nodes and a firmware distance matrix. This module:

  * picks the guest architecture from the binary (x86-64 or arm64: GUEST_ARCHES);
  * checks the host tools (qemu-system-x86_64 or -aarch64, cpio, a static busybox);
  * fetches ONE Debian kernel package once (with the parts of a split one)
    and caches its vmlinuz ($NUMAPROBE_VM_CACHE, default ~/.cache/numaprobe-vm);
  * packs an initramfs: busybox, the numaprobe binary and the shared libraries
    its loader names (same paths), a generated /init and the scenario scripts;
  * boots the guest with a hard timeout and returns what each scenario saved.

Results travel on a channel of their own (a second serial port, guest /dev/ttyS1,
on x86; a virtio console, /dev/hvc0, on arm64's `virt` machine, which has one
UART), a host file, so kernel messages on the console can never interleave with
them. Each scenario's output directory is sent as a base64 tar between
`===NUMAPROBE-RESULT-BEGIN <name>===` and `===NUMAPROBE-RESULT-END <name>===`.

An arm64 binary (the release-aarch64 cross build) needs the arm64 libraries it
links, from $NUMAPROBE_TARGET_SYSROOT (tests/vm/CMakeLists.txt sets it to the
tree .ci/arm64-sysroot unpacks), and qemu-user to list them.

Timings inside the guest are the emulator's: tests built on this module assert
structure and placement only.

Stdlib only. Raises HarnessUnavailable when a prerequisite is missing (tests skip,
or fail when CI=true) and VmError when the guest misbehaves (always a failure).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import fcntl
import gzip
import io
import json
import lzma
import os
import platform
import re
import shlex
import shutil
import struct
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("NUMAPROBE_SOURCE_DIR") or Path(__file__).resolve().parents[2])

# Kernel features the scenarios need on every architecture, which must be built
# in (=y); GuestArch adds its own, and the few modules it loads.
REQUIRED_KERNEL_CONFIG = (
    "NUMA", "MIGRATION", "CGROUPS", "CPUSETS",
    "HUGETLBFS", "HUGETLB_PAGE", "TRANSPARENT_HUGEPAGE", "HOTPLUG_CPU", "DEVTMPFS",
    "BLK_DEV_INITRD", "RD_GZIP", "TMPFS", "INET", "UNIX", "PROC_FS", "SYSFS",
)


@dataclasses.dataclass(frozen=True)
class GuestArch:
    """What differs between guest architectures; everything else is shared."""
    name: str                  # Debian's architecture name
    elf_machine: int           # e_machine of the binaries it runs
    qemu: str                  # emulator, and its Debian package
    qemu_package: str
    machine: tuple[str, ...]   # QEMU machine options
    kernel_meta: str           # Debian package depending on the current kernel
    kernel_env: str            # variable naming another kernel package
    kernel_cache: str          # directory under cache_dir()
    kernel_config: tuple[str, ...]   # built-in features beyond REQUIRED_KERNEL_CONFIG
    modules: tuple[str, ...]   # loaded in this order by /init (CONFIG_X: file name)
    console: str               # kernel console device
    results_dev: str           # guest device of the results channel
    results_args: tuple[str, ...]    # QEMU options making it ({path}: the host file)
    busybox_package: str       # static busybox: the host's, or unpacked (foreign)
    loader_lister: str         # qemu-user that makes the loader list libraries ("": ldd)
    # The Debian suite the kernel comes from ("": the machine's own apt
    # sources): a kernel flavour Debian 12 lacks is fetched from a later
    # suite through a private package list (cache_dir()/apt-<suite>-<arch>).
    kernel_suite: str = ""

    @property
    def kernel_flavour(self) -> str:
        """amd64, arm64, arm64-16k: what versioned kernel package names end in."""
        return self.kernel_meta.removeprefix("linux-image-")


GUEST_ARCHES = {
    "amd64": GuestArch(
        name="amd64", elf_machine=0x3E, qemu="qemu-system-x86_64", qemu_package="qemu-system-x86",
        machine=(), kernel_meta="linux-image-amd64", kernel_env="NUMAPROBE_VM_KERNEL_PACKAGE",
        kernel_cache="kernel",
        kernel_config=("ACPI_NUMA", "X86_64_ACPI_NUMA", "SERIAL_8250", "SERIAL_8250_CONSOLE"),
        modules=(), console="ttyS0", results_dev="/dev/ttyS1", results_args=("-serial", "file:{path}"),
        busybox_package="", loader_lister=""),
    # `virt` boots from a device tree (OF_NUMA carries the -numa layout); its one
    # PL011 UART is the console, so results go over virtio-console, which the
    # Debian kernel has as modules.
    "arm64": GuestArch(
        name="arm64", elf_machine=0xB7, qemu="qemu-system-aarch64", qemu_package="qemu-system-arm",
        machine=("-M", "virt"), kernel_meta="linux-image-arm64",
        kernel_env="NUMAPROBE_VM_KERNEL_PACKAGE_ARM64", kernel_cache="kernel-arm64",
        kernel_config=("OF_NUMA", "SERIAL_AMBA_PL011", "SERIAL_AMBA_PL011_CONSOLE", "VIRTIO"),
        modules=("VIRTIO_MMIO:virtio_mmio.ko", "VIRTIO_CONSOLE:virtio_console.ko"),
        console="ttyAMA0", results_dev="/dev/hvc0",
        results_args=("-device", "virtio-serial-device", "-chardev", "file,id=results,path={path}",
                      "-device", "virtconsole,chardev=results"),
        busybox_package="busybox-static:arm64", loader_lister="qemu-aarch64-static"),
}

# Kernel variants a test may ask for instead of its architecture's default
# (boot(kernel_variant=...)): the same guest with another kernel.
#   arm64-16k: 16 KiB base pages (Apple-silicon-like, and the page size of
#   some Ampere and Graviton fleets' kernels), Debian 13's arm64-16k flavour
#   (Linux 6.12; Debian 12 has only 4 KiB arm64 kernels, and no 64 KiB one in
#   any suite). Its virtio console is built in; virtio_mmio is an xz module.
KERNEL_VARIANTS = {
    "arm64-16k": dataclasses.replace(
        GUEST_ARCHES["arm64"], kernel_meta="linux-image-arm64-16k",
        kernel_env="NUMAPROBE_VM_KERNEL_PACKAGE_ARM64_16K", kernel_cache="kernel-arm64-16k",
        kernel_config=GUEST_ARCHES["arm64"].kernel_config + ("ARM64_16K_PAGES", "VIRTIO_CONSOLE"),
        modules=("VIRTIO_MMIO:virtio_mmio.ko",), kernel_suite="trixie"),
    #   amd64-backports: Debian 13's backported amd64 kernel (Linux 7.x), for
    #   the kernel's own interleave weights: weighted_interleave/nodeN (6.9)
    #   set from the HMAT's bandwidth when `auto` is true (6.16). Its package
    #   is split (see _split_parts); everything the guest needs is built in.
    "amd64-backports": dataclasses.replace(
        GUEST_ARCHES["amd64"], kernel_env="NUMAPROBE_VM_KERNEL_PACKAGE_AMD64_BACKPORTS",
        kernel_cache="kernel-amd64-backports",
        kernel_config=GUEST_ARCHES["amd64"].kernel_config + ("ACPI_HMAT", "HMEM_REPORTING"),
        kernel_suite="trixie-backports"),
}

# Busybox applets /init and the scenario scripts use (symlinked in /bin).
APPLETS = (
    "insmod",
    "sh", "ash", "mount", "umount", "mkdir", "rmdir", "cat", "echo", "printf", "ls", "tar",
    "base64", "poweroff", "sleep", "timeout", "kill", "grep", "sed", "awk", "tr", "cut",
    "head", "tail", "wc", "taskset", "wget", "ip", "ifconfig", "ps", "sync", "test", "[",
    "true", "false", "seq", "rm", "cp", "ln", "stty", "uname", "dmesg", "env", "sort",
    "uniq", "nproc", "tee", "pidof", "find", "date", "id", "usleep", "xargs", "readlink",
    "basename",
)

RESULT_BEGIN = "===NUMAPROBE-RESULT-BEGIN {}==="
RESULT_END = "===NUMAPROBE-RESULT-END {}==="
GUEST_READY = "===NUMAPROBE-GUEST-READY==="
GUEST_DONE = "===NUMAPROBE-GUEST-DONE==="
CONSOLE_TAIL_LINES = 40
MAX_BOOT_SECONDS = 400


class HarnessUnavailable(RuntimeError):
    """A prerequisite (tool, kernel, binary) is missing: skip locally, fail in CI."""


class VmError(RuntimeError):
    """The guest failed to boot, crashed, timed out or returned garbled results."""


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


# --------------------------------------------------------------------------- tools

def elf_machine(path: Path) -> int:
    """e_machine of an ELF file (HarnessUnavailable if it is not one)."""
    with open(path, "rb") as f:
        head = f.read(20)
    if head[:4] != b"\x7fELF":
        raise HarnessUnavailable(f"{path} is not an ELF executable")
    return struct.unpack_from("<H", head, 18)[0]


def guest_arch(binary: Path) -> GuestArch:
    """The guest architecture that runs `binary`."""
    machine = elf_machine(binary)
    for arch in GUEST_ARCHES.values():
        if arch.elf_machine == machine:
            return arch
    raise HarnessUnavailable(f"{binary}: no guest for ELF machine {machine:#x}")


def is_foreign(arch: GuestArch) -> bool:
    """Whether `arch` is not the host's: its guests run under full emulation."""
    host = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    return arch.name != host


def target_sysroot(arch: GuestArch) -> Path | None:
    """Where a foreign binary's libraries live (None: a native binary uses the host's)."""
    if not arch.loader_lister:
        return None
    root = os.environ.get("NUMAPROBE_TARGET_SYSROOT")
    if not root or not (Path(root) / "lib").is_dir():
        raise HarnessUnavailable(f"an {arch.name} binary needs its libraries: set "
                                 "NUMAPROBE_TARGET_SYSROOT (.ci/arm64-sysroot unpacks them)")
    return Path(root)


def host_runner(binary: Path) -> list[str]:
    """Command prefix that runs `binary` on this machine (qemu-user for a foreign one)."""
    arch = guest_arch(binary)
    sysroot = target_sysroot(arch)
    if sysroot is None:
        return [str(binary)]
    lister = shutil.which(arch.loader_lister)
    if lister is None:
        raise HarnessUnavailable(f"{arch.loader_lister} (Debian package qemu-user-static) is "
                                 "missing: run .ci/install-deps")
    return [lister, "-L", str(sysroot), str(binary)]


def _elf_interpreter(path: Path) -> str | None:
    """PT_INTERP of a 64-bit little-endian ELF file (None: static)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            raise HarnessUnavailable(f"{path} is not a 64-bit ELF executable")
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, _flags, p_offset, _vaddr, _paddr, p_filesz = struct.unpack("<IIQQQQ", f.read(40))
            if p_type == 3:  # PT_INTERP
                f.seek(p_offset)
                return f.read(p_filesz).rstrip(b"\0").decode()
    return None


def require_tools(arch: GuestArch) -> dict[str, Path]:
    """Paths of the host tools; HarnessUnavailable naming the packages otherwise."""
    found, missing = {}, []
    tools = {arch.qemu: arch.qemu_package, "cpio": "cpio"}
    if not arch.busybox_package:
        tools["busybox"] = "busybox-static"
    for tool, package in tools.items():
        path = shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/bin:/usr/bin")
        if path is None:
            missing.append(f"{tool} (Debian package {package})")
        else:
            found[tool] = Path(path)
    if missing:
        raise HarnessUnavailable("VM tests need " + ", ".join(missing)
                                 + ": run .ci/install-deps (as root)")
    if arch.busybox_package:
        found["busybox"] = ensure_foreign_busybox(arch)
    if _elf_interpreter(found["busybox"]) is not None:
        raise HarnessUnavailable(f"{found['busybox']} is dynamically linked; the guest needs the "
                                 "static one from busybox-static: run .ci/install-deps")
    return found


# -------------------------------------------------------------------------- kernel

def cache_dir() -> Path:
    return Path(os.environ.get("NUMAPROBE_VM_CACHE") or Path.home() / ".cache" / "numaprobe-vm")


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@dataclasses.dataclass(frozen=True)
class Kernel:
    package: str
    vmlinuz: Path
    config: Path
    modules: tuple[Path, ...] = ()  # GuestArch.modules, in order


def _kernel_config_missing(config: Path, arch: GuestArch) -> list[str]:
    values = {}
    for line in config.read_text(errors="replace").splitlines():
        m = re.match(r"CONFIG_(\w+)=(.*)", line)
        if m:
            values[m.group(1)] = m.group(2)
    missing = [f"CONFIG_{k}={values.get(k, 'unset')}" for k in REQUIRED_KERNEL_CONFIG + arch.kernel_config
               if values.get(k) != "y"]
    for module in arch.modules:
        key = module.split(":")[0]
        if values.get(key) not in ("y", "m"):
            missing.append(f"CONFIG_{key}={values.get(key, 'unset')}")
    return missing


def _run_host(cmd: list[str], what: str, cwd: Path | None = None) -> str:
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise HarnessUnavailable(f"{what}: `{shlex.join(cmd)}` failed: {e}") from e
    if p.returncode != 0:
        raise HarnessUnavailable(f"{what}: `{shlex.join(cmd)}` exited {p.returncode}: "
                                 + (p.stderr or p.stdout).strip()[-1500:])
    return p.stdout


def _debian_mirror() -> str:
    """The Debian archive the machine's apt reads: a suite of its own (bookworm,
    trixie: no -updates, -security or -backports) whose Release says l=Debian."""
    policy = _run_host(["apt-cache", "policy"], "reading apt's sources")
    m = re.search(r"^\s+\d+ (https?://\S+) [a-z]+/main \S+ Packages\n\s+release [^\n]*\bl=Debian,", policy, re.M)
    if not m:
        raise HarnessUnavailable("no Debian mirror in apt's configuration (apt-cache policy)")
    return m.group(1)


# A suite's private list older than this is read again before apt uses it. It
# is used only to fetch a kernel into an empty cache, and a suite such as
# trixie-backports moves on: an old list names a .deb the mirror has dropped.
SUITE_LIST_MAX_AGE_SECONDS = 3600


def _suite_apt(arch: GuestArch) -> list[str]:
    """apt options that read only `arch.kernel_suite`'s package list for
    `arch.name`, kept in cache_dir()/apt-<suite>-<arch> (made from the Debian
    mirror the machine's apt uses, and read again when it is older than
    SUITE_LIST_MAX_AGE_SECONDS; apt checks it against the suite's signed
    Release file); [] for the machine's own sources."""
    if not arch.kernel_suite:
        return []
    root = cache_dir() / f"apt-{arch.kernel_suite}-{arch.name}"
    opts = [f"-o=Dir::Etc::SourceList={root}/sources.list", "-o=Dir::Etc::SourceParts=/nonexistent",
            f"-o=Dir::State::Lists={root}/lists", f"-o=Dir::Cache={root}/cache",
            f"-o=APT::Architectures::={arch.name}", "-o=Dir::State::status=/dev/null"]
    marker = root / "lists" / ".updated"
    with _locked(root / ".lock"):
        if not marker.exists() or time.time() - marker.stat().st_mtime > SUITE_LIST_MAX_AGE_SECONDS:
            for d in ("lists/partial", "cache/archives/partial"):
                (root / d).mkdir(parents=True, exist_ok=True)
            (root / "sources.list").write_text(f"deb [arch={arch.name}] {_debian_mirror()} {arch.kernel_suite} main\n")
            _run_host(["apt-get", *opts, "-q", "update"], f"reading Debian {arch.kernel_suite}'s package list")
            marker.write_text("")
    return opts


def resolve_kernel_package(arch: GuestArch) -> str:
    """The one versioned package the architecture's kernel meta package depends on
    (never a glob)."""
    out = _run_host(["apt-cache", *_suite_apt(arch), "depends", arch.kernel_meta], "finding the Debian kernel")
    names = sorted(set(re.findall(
        rf"^\s*Depends:\s*(linux-image-[0-9][^\s:]*-{arch.kernel_flavour})(?::{arch.name})?\s*$", out, re.M)))
    if len(names) != 1:
        raise HarnessUnavailable(f"expected one linux-image-<version>-{arch.kernel_flavour} dependency of "
                                 f"{arch.kernel_meta}, apt-cache says: {out.strip()!r}; set "
                                 f"{arch.kernel_env} to the package to use")
    return names[0]


def _apt_download(package: str, dest: Path, apt_options: list[str] = ()) -> Path:
    """`apt-get download` of exactly one package into `dest`; the .deb's path."""
    dest.chmod(0o755)  # apt fetches as its _apt user where it can
    _run_host(["apt-get", *apt_options, "download", package], f"downloading {package}", cwd=dest)
    debs = list(dest.glob("*.deb"))
    if len(debs) != 1:
        raise HarnessUnavailable(f"apt-get download {package} gave {debs}")
    return debs[0]


def ensure_kernel(arch: GuestArch) -> Kernel:
    """The cached kernel, downloading exactly one Debian kernel package (and the
    parts of a split one, _split_parts) the first time.

    The variable arch.kernel_env picks the package; otherwise the first kernel ever
    cached is reused forever (no network needed), and only an empty cache asks apt.
    """
    root = cache_dir() / arch.kernel_cache
    wanted = os.environ.get(arch.kernel_env)
    module_files = [m.split(":")[1] for m in arch.modules]
    with _locked(root / ".lock"):
        current = root / "current"
        package = wanted or (current.read_text().strip() if current.exists() else None)
        if package:
            kernel = _cached_kernel(root / package, package, module_files)
            if kernel.vmlinuz.is_file() and kernel.config.is_file() and all(m.is_file() for m in kernel.modules):
                _check_kernel(kernel, arch)
                return kernel
        package = package or resolve_kernel_package(arch)
        if not re.fullmatch(r"linux-image-[0-9][\w.+-]*", package):
            raise HarnessUnavailable(f"refusing kernel package name {package!r}")
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            tmp = Path(tmp)
            apt_options = _suite_apt(arch)

            def fetch(part: str) -> Path:
                (tmp / part).mkdir()
                deb = _apt_download(part if arch.name == "amd64" else f"{part}:{arch.name}", tmp / part,
                                    apt_options)
                _extract_boot(deb, tmp / "x", module_files)
                return deb

            parts = [package] + _split_parts(fetch(package), package, bool(module_files))
            for part in parts[1:]:
                fetch(part)
            # /boot/vmlinuz-V and /boot/config-V, or (split packages)
            # /usr/lib/modules/V/vmlinuz and .../config.
            images = list((tmp / "x").glob("boot/vmlinuz-*")) + list((tmp / "x").glob("usr/lib/modules/*/vmlinuz"))
            configs = list((tmp / "x").glob("boot/config-*")) + list((tmp / "x").glob("usr/lib/modules/*/config"))
            if len(images) != 1 or len(configs) != 1:
                raise HarnessUnavailable(f"{' + '.join(parts)} hold {images} / {configs}, expected one each")
            dest = root / package
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir(parents=True)
            shutil.move(images[0], dest / "vmlinuz")
            shutil.move(configs[0], dest / "config")
            for name in module_files:
                found = list((tmp / "x").rglob(name)) + list((tmp / "x").rglob(name + ".xz"))
                if len(found) != 1:
                    raise HarnessUnavailable(f"{' + '.join(parts)} hold {len(found)} copies of module {name}")
                if found[0].suffix == ".xz":
                    # Compressed modules (Debian 13): busybox's insmod hands the
                    # kernel the bytes as they are, so they go in uncompressed.
                    (dest / name).write_bytes(lzma.decompress(found[0].read_bytes()))
                else:
                    shutil.move(found[0], dest / name)
        (root / "current.tmp").write_text(package + "\n")
        os.replace(root / "current.tmp", current)
        kernel = _cached_kernel(dest, package, module_files)
        _check_kernel(kernel, arch)
        return kernel


def _cached_kernel(directory: Path, package: str, module_files: list[str]) -> Kernel:
    return Kernel(package, directory / "vmlinuz", directory / "config",
                  tuple(directory / name for name in module_files))


def _split_parts(image_deb: Path, package: str, with_modules: bool) -> list[str]:
    """The packages a split kernel package depends on for its files, [] if it
    is not split. trixie-backports' 7.x kernels ship linux-image-V empty,
    depending on linux-binary-V (the vmlinuz), linux-base-V (its config) and
    linux-modules-V (every module, over 100 MB: fetched only when the guest
    loads one); earlier ones hold all of it in linux-image-V."""
    depends = _run_host(["dpkg-deb", "-f", str(image_deb), "Depends"], f"reading {image_deb.name}")
    version = re.escape(package.removeprefix("linux-image-"))
    parts = re.findall(rf"(?:^|,)\s*(linux-(?!image-)[a-z]+-{version})\b", depends)
    return [p for p in dict.fromkeys(parts) if with_modules or not p.startswith("linux-modules-")]


def _extract_boot(deb: Path, dest: Path, module_files: list[str]) -> None:
    """`dpkg -x`, but only the kernel image and config (./boot, or a split
    package's ./usr/lib/modules/V/{vmlinuz,config}) and the named modules: all
    of them (~400 MB unpacked) are not needed."""
    proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            for member in tar:
                name = member.name.removeprefix("./")
                wanted = (name.startswith("boot/")
                          or re.fullmatch(r"usr/lib/modules/[^/]+/(vmlinuz|config)", name)
                          or Path(member.name).name in module_files
                          or Path(member.name).name.removesuffix(".xz") in module_files)
                if member.isfile() and wanted:
                    if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4
                        tar.extract(member, dest, filter="data")
                    else:
                        tar.extract(member, dest)
    except tarfile.TarError as e:
        raise HarnessUnavailable(f"unpacking {deb.name}: {e}") from e
    finally:
        proc.stdout.close()
        err = proc.stderr.read().decode(errors="replace")
        proc.wait()
    if proc.returncode != 0:
        raise HarnessUnavailable(f"dpkg-deb --fsys-tarfile {deb.name} exited {proc.returncode}: {err}")


def _check_kernel(kernel: Kernel, arch: GuestArch) -> None:
    missing = _kernel_config_missing(kernel.config, arch)
    if missing:
        raise HarnessUnavailable(f"kernel {kernel.package} lacks features the VM tests "
                                 f"need ({', '.join(missing)}); pick another with {arch.kernel_env}")


def ensure_foreign_busybox(arch: GuestArch) -> Path:
    """A static busybox of a foreign architecture, unpacked once into the cache.
    Never installed: busybox-static:arm64 would replace the host's /bin/busybox."""
    root = cache_dir() / f"busybox-{arch.name}"
    with _locked(root / ".lock"):
        binary = root / "busybox"
        if binary.is_file():
            return binary
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            tmp = Path(tmp)
            deb = _apt_download(arch.busybox_package, tmp)
            _run_host(["dpkg-deb", "-x", str(deb), str(tmp / "x")], f"unpacking {deb.name}")
            found = tmp / "x" / "bin" / "busybox"
            if not found.is_file() or elf_machine(found) != arch.elf_machine:
                raise HarnessUnavailable(f"{deb.name} holds no {arch.name} /bin/busybox")
            shutil.move(found, binary)
        return binary


# ------------------------------------------------------------------------ topology

@dataclasses.dataclass(frozen=True)
class VmNode:
    cpus: int      # 0: a memory-only node
    mem_mib: int
    # With HMAT: the node whose CPUs are this memory's attached initiator
    # (QEMU's initiator=); None: the node itself (a node with CPUs).
    initiator: int | None = None


@dataclasses.dataclass(frozen=True)
class HmatLb:
    """One `-numa hmat-lb` pair: what the firmware advertises from the CPUs of
    node `initiator` to the memory of node `target` (latency in ns, bandwidth
    in MiB/s, which is what the guest kernel shows in sysfs)."""
    initiator: int
    target: int
    latency_ns: int
    bandwidth_mib: int               # read and write, or read alone when the next is set
    write_bandwidth_mib: int | None = None

    @property
    def read_write_mib(self) -> tuple[int, int]:
        write = self.bandwidth_mib if self.write_bandwidth_mib is None else self.write_bandwidth_mib
        return self.bandwidth_mib, write


@dataclasses.dataclass(frozen=True)
class VmTopology:
    """Guest NUMA layout. CPUs are numbered consecutively over the nodes that have
    them; `distances` holds (a, b) -> value for a < b (QEMU mirrors it), 20 if absent."""
    name: str
    nodes: tuple[VmNode, ...]
    distances: dict = dataclasses.field(default_factory=dict)
    # ACPI HMAT entries; non-empty turns on `-machine hmat=on`.
    hmat: tuple[HmatLb, ...] = ()

    @property
    def n_cpus(self) -> int:
        return sum(n.cpus for n in self.nodes)

    @property
    def mem_mib(self) -> int:
        return sum(n.mem_mib for n in self.nodes)

    def node_cpus(self, node: int) -> list[int]:
        first = sum(n.cpus for n in self.nodes[:node])
        return list(range(first, first + self.nodes[node].cpus))

    def cpu_node(self, cpu: int) -> int:
        for i in range(len(self.nodes)):
            if cpu in self.node_cpus(i):
                return i
        raise KeyError(cpu)

    def cpu_nodes(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n.cpus]

    def distance(self, a: int, b: int) -> int:
        if a == b:
            return 10
        return self.distances.get((min(a, b), max(a, b)), 20)

    def matrix(self) -> list[list[int]]:
        ids = range(len(self.nodes))
        return [[self.distance(a, b) for b in ids] for a in ids]

    def qemu_args(self) -> list[str]:
        cpu_nodes = self.cpu_nodes()
        per_node = {self.nodes[i].cpus for i in cpu_nodes}
        smp = str(self.n_cpus)
        if len(per_node) == 1:  # one package per CPU node, like a real multi-socket box
            smp += f",sockets={len(cpu_nodes)},cores={per_node.pop()},threads=1"
        args = ["-m", f"{self.mem_mib}M", "-smp", smp]
        for i, node in enumerate(self.nodes):
            args += ["-object", f"memory-backend-ram,id=m{i},size={node.mem_mib}M"]
        if self.hmat:
            args += ["-machine", "hmat=on"]
        for i, node in enumerate(self.nodes):
            spec = f"node,nodeid={i},memdev=m{i}"
            if node.cpus:
                cpus = self.node_cpus(i)
                spec += f",cpus={cpus[0]}-{cpus[-1]}"
            if self.hmat:
                spec += f",initiator={self.initiator_of(i)}"
            args += ["-numa", spec]
        for a in range(len(self.nodes)):
            for b in range(a + 1, len(self.nodes)):
                args += ["-numa", f"dist,src={a},dst={b},val={self.distance(a, b)}"]
        # One access-bandwidth table, or (when an entry's write bandwidth
        # differs) a read- and a write-bandwidth table, each for every pair.
        split = any(lb.write_bandwidth_mib is not None for lb in self.hmat)
        for lb in self.hmat:
            where = f"hmat-lb,initiator={lb.initiator},target={lb.target},hierarchy=memory"
            args += ["-numa", f"{where},data-type=access-latency,latency={lb.latency_ns}"]
            if split:
                read, write = lb.read_write_mib
                args += ["-numa", f"{where},data-type=read-bandwidth,bandwidth={read}M",
                         "-numa", f"{where},data-type=write-bandwidth,bandwidth={write}M"]
            else:
                args += ["-numa", f"{where},data-type=access-bandwidth,bandwidth={lb.bandwidth_mib}M"]
        return args

    def initiator_of(self, node: int) -> int:
        initiator = self.nodes[node].initiator
        return node if initiator is None else initiator


# ----------------------------------------------------------------------- initramfs

@dataclasses.dataclass
class Scenario:
    """A shell script run by busybox sh inside the guest, in its own subshell, with
    $OUT set to a directory whose files come back to the host. The helpers of
    GUEST_LIB (run, save, ...) are available. `timeout` bounds the whole script."""
    name: str
    script: str
    timeout: int = 120


GUEST_LIB = r"""
# Helpers for scenario scripts (sourced; busybox sh).
# run NAME CMD...   stdout -> $OUT/NAME.out, stderr -> NAME.err, exit code -> NAME.rc
run() { _n=$1; shift; "$@" >"$OUT/$_n.out" 2>"$OUT/$_n.err"; _rc=$?; echo $_rc >"$OUT/$_n.rc"; return $_rc; }
# save NAME FILE...  concatenated contents (errors included) -> $OUT/NAME
save() { _n=$1; shift; cat "$@" >"$OUT/$_n" 2>&1; }
# note TEXT  a line in $OUT/_log and on the console
note() { echo "$*" >>"$OUT/_log"; echo "numaprobe-vm[$SCENARIO]: $*" >/dev/console; }
# snapshot_nodes NAME  online nodes/CPUs and every node's distance row -> $OUT/NAME
snapshot_nodes() {
  { echo "nodes_online $(cat /sys/devices/system/node/online)"
    echo "cpus_online $(cat /sys/devices/system/cpu/online)"
    for d in /sys/devices/system/node/node[0-9]*; do
      echo "$(basename $d) cpulist=$(cat $d/cpulist) distance=$(cat $d/distance)"
    done; } >"$OUT/$1" 2>&1
}
"""

INIT_TEMPLATE = r"""#!/bin/sh
# Generated by tests/vm/vmharness.py: mounts, runs every scenario, sends results
# on the results channel and powers off. Never exits (PID 1 exiting panics the kernel).
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mkdir -p /proc /sys /dev /tmp /run /out
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# A host tree under /tmp (a checkout in `mktemp -d`) would be hidden by the
# tmpfs: move what the initramfs put there onto it.
if [ -n "$(ls -A /tmp)" ]; then mv /tmp /.initramfs-tmp; mkdir /tmp; fi
mount -t tmpfs tmpfs /tmp
if [ -d /.initramfs-tmp ]; then cp -a /.initramfs-tmp/. /tmp/ && rm -rf /.initramfs-tmp; fi
mount -t tmpfs tmpfs /run
mkdir -p /run/lock && chmod 1777 /run/lock  # as on Debian: the default probe_lock_file lives here
mount -t cgroup2 cgroup2 /sys/fs/cgroup || echo "numaprobe-vm: cgroup2 mount failed"
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
for m in __MODULES__; do insmod /modules/$m || echo "numaprobe-vm: insmod $m failed"; done
RES=__RESULTS_DEV__
i=0
while [ ! -e $RES ] && [ $i -lt 100 ]; do usleep 100000; i=$((i + 1)); done  # a module's device appears late
stty -F $RES raw -echo 2>/dev/null
echo "numaprobe-vm: guest up, kernel $(uname -r), nodes $(cat /sys/devices/system/node/online)"
echo "__READY__" >$RES
for SCENARIO in __SCENARIOS__; do
  OUT=/out/$SCENARIO
  mkdir -p $OUT
  echo "numaprobe-vm: scenario $SCENARIO"
  limit=$(cat /scenarios/$SCENARIO.timeout)
  ( cd /tmp && export OUT SCENARIO && exec timeout $limit sh -c '. /scenarios/lib.sh; . /scenarios/$SCENARIO.sh' ) \
      >$OUT/_stdout 2>$OUT/_stderr </dev/null
  echo $? >$OUT/_rc
  { echo "__BEGIN__ $SCENARIO===" ; tar -C $OUT -cf - . | base64 ; echo "__END__ $SCENARIO===" ; } >$RES
done
echo "__DONE__" >$RES
sync
poweroff -f
sleep 5
echo "numaprobe-vm: poweroff failed"
while true; do sleep 60; done
"""


def _library_paths(binary: Path, arch: GuestArch) -> list[tuple[Path, Path]]:
    """(guest path, host file) of the shared libraries and loader `binary` needs, as
    its loader lists them: `ldd` for a native binary; for a foreign one the loader
    itself (`ld.so --list`) under qemu-user, whose -L makes the sysroot its root."""
    sysroot = target_sysroot(arch)
    if sysroot is None:
        cmd = ["ldd", str(binary)]
    else:
        interpreter = _elf_interpreter(binary)
        if interpreter is None:
            return []
        cmd = host_runner(sysroot / interpreter.lstrip("/"))[:-1] + [
            str(sysroot / interpreter.lstrip("/")), "--list", str(binary)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        if "not a dynamic executable" in (p.stdout + p.stderr):
            return []
        raise HarnessUnavailable(f"{shlex.join(cmd)} failed: {p.stderr.strip()}")
    paths = []
    for line in p.stdout.splitlines():
        if "not found" in line:
            raise HarnessUnavailable(f"{shlex.join(cmd)}: {line.strip()}")
        m = re.search(r"=>\s*(/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if m:
            guest = Path(m.group(1))
            if sysroot and guest.is_relative_to(sysroot):
                # Found through a RUNPATH into the sysroot (the build tree's, or
                # the loader named by its host path): in the guest it is at the root.
                guest = Path("/") / guest.relative_to(sysroot)
            # qemu-user reads a path from the sysroot when it is there, else from the host.
            in_sysroot = sysroot / guest.relative_to("/") if sysroot else None
            paths.append((guest, in_sysroot if in_sysroot and in_sysroot.exists() else guest))
    return paths


def build_initramfs(dest: Path, binary: Path, scenarios: list[Scenario], busybox: Path,
                    arch: GuestArch = GUEST_ARCHES["amd64"], modules: tuple[Path, ...] = (),
                    extra_binaries: tuple[Path, ...] = (), host_trees: tuple[Path, ...] = ()) -> Path:
    """Packs busybox, `binary` (as /bin/numaprobe) and `extra_binaries` (as
    /bin/<name>) with their libraries, the kernel `modules` /init loads, the
    `host_trees` directories at their host paths, /init and the scenarios into
    a gzip'd newc cpio at `dest`."""
    names = [s.name for s in scenarios]
    if len(set(names)) != len(names) or not all(re.fullmatch(r"[a-z0-9_]+", n) for n in names):
        raise ValueError(f"scenario names must be unique [a-z0-9_]+: {names}")
    with tempfile.TemporaryDirectory(prefix="numaprobe-vm-root-") as tmp:
        root = Path(tmp)
        for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "run",
                  "etc", "root", "out", "scenarios", "modules"):
            (root / d).mkdir(parents=True, exist_ok=True)
        shutil.copy2(busybox, root / "bin/busybox")
        for applet in APPLETS:
            (root / "bin" / applet).symlink_to("busybox")
        programs = {"numaprobe": binary, **{b.name: b for b in extra_binaries}}
        for name, program in programs.items():
            shutil.copy2(program, root / "bin" / name)
            for guest, host in _library_paths(program, arch):
                target = root / guest.relative_to("/")
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(host.resolve(), target)
        for module in modules:
            shutil.copy2(module, root / "modules" / module.name)
        for tree in host_trees:
            shutil.copytree(tree, root / tree.resolve().relative_to("/"), symlinks=True)
        (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
        (root / "etc/group").write_text("root:x:0:\n")
        (root / "scenarios/lib.sh").write_text(GUEST_LIB)
        for s in scenarios:
            (root / f"scenarios/{s.name}.sh").write_text(s.script)
            (root / f"scenarios/{s.name}.timeout").write_text(f"{int(s.timeout)}\n")
        init = (INIT_TEMPLATE.replace("__SCENARIOS__", " ".join(names))
                .replace("__MODULES__", " ".join(m.name for m in modules))
                .replace("__RESULTS_DEV__", arch.results_dev)
                .replace("__READY__", GUEST_READY).replace("__DONE__", GUEST_DONE)
                .replace("__BEGIN__ ", "===NUMAPROBE-RESULT-BEGIN ")
                .replace("__END__ ", "===NUMAPROBE-RESULT-END "))
        (root / "init").write_text(init)
        (root / "init").chmod(0o755)
        members = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
        p = subprocess.run(["cpio", "--quiet", "-o", "-H", "newc", "-R", "0:0"], cwd=root,
                           input=("\n".join(members) + "\n").encode(), capture_output=True)
        if p.returncode != 0 or len(p.stdout) < 1024:
            raise HarnessUnavailable(f"cpio produced {len(p.stdout)} bytes (exit {p.returncode}): "
                                     f"{p.stderr.decode(errors='replace').strip()}")
        dest.write_bytes(gzip.compress(p.stdout, compresslevel=6))
    return dest


# ---------------------------------------------------------------------------- boot

@dataclasses.dataclass
class ScenarioResult:
    """What a scenario left in $OUT, plus its script's _stdout/_stderr/_rc."""
    name: str
    files: dict[str, bytes]

    def has(self, name: str) -> bool:
        return name in self.files

    def text(self, name: str) -> str:
        if name not in self.files:
            raise AssertionError(f"scenario {self.name} saved no {name!r}; it saved "
                                 f"{sorted(self.files)}\n{self.describe()}")
        return self.files[name].decode(errors="replace")

    def rc(self, step: str | None = None) -> int:
        return int(self.text(f"{step}.rc" if step else "_rc").strip())

    def json(self, step: str):
        text = self.text(f"{step}.out")
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise AssertionError(f"scenario {self.name} step {step}: stdout is not JSON ({e}):\n"
                                 f"{text[:2000]}\nstderr:\n{self.files.get(step + '.err', b'').decode()[:2000]}")

    def describe(self, limit: int = 3000) -> str:
        """Script exit code, log and stderr, for assertion messages."""
        rc = self.files.get("_rc", b"?").decode().strip()
        killed = " (killed at the scenario's time limit)" if rc in ("124", "137", "143") else ""
        parts = [f"[{self.name}] script exit {rc}{killed}"]
        for key in ("_log", "_stderr", "_stdout"):
            if self.files.get(key):
                parts.append(f"--- {key}\n" + self.files[key].decode(errors="replace")[-limit:])
        return "\n".join(parts)


@dataclasses.dataclass
class BootResult:
    topology: VmTopology
    results: dict[str, ScenarioResult]
    console: str
    seconds: float

    def __getitem__(self, name: str) -> ScenarioResult:
        if name not in self.results:
            raise VmError(f"guest sent no result for scenario {name!r}\n" + console_tail(self.console))
        return self.results[name]


def console_tail(console: str, lines: int = CONSOLE_TAIL_LINES) -> str:
    plain = re.sub(r"\x1b(\[[0-9;?]*[A-Za-z]|c)", "", console.replace("\r", ""))  # SeaBIOS escapes
    tail = plain.rstrip("\n").splitlines()[-lines:]
    return f"last {len(tail)} lines of the guest console:\n" + "\n".join("  | " + l for l in tail)


def parse_results(channel: str) -> tuple[dict[str, ScenarioResult], bool]:
    """Scenario results between markers, and whether the guest said it was done."""
    results, current, buf = {}, None, []
    for raw in channel.replace("\r", "").splitlines():
        line = raw.strip()
        if current is None:
            m = re.fullmatch(r"===NUMAPROBE-RESULT-BEGIN ([a-z0-9_]+)===", line)
            if m:
                current, buf = m.group(1), []
        elif line == RESULT_END.format(current):
            try:
                blob = base64.b64decode("".join(buf), validate=True)
                with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
                    files = {m.name.removeprefix("./"): tar.extractfile(m).read()
                             for m in tar.getmembers() if m.isfile()}
            except (ValueError, tarfile.TarError) as e:
                raise VmError(f"result of scenario {current} is garbled: {e}") from e
            results[current] = ScenarioResult(current, files)
            current = None
        else:
            buf.append(line)
    return results, GUEST_DONE in channel


def default_binary() -> Path:
    env = os.environ.get("NUMAPROBE_BIN")
    if env:
        return Path(env)
    return SOURCE_DIR / "build" / "release" / "numaprobe"


def boot(topology: VmTopology, scenarios: list[Scenario], binary: Path | None = None,
         cmdline: str = "", timeout: float | None = None, workdir: Path | None = None,
         extra_binaries: tuple[Path, ...] = (), host_trees: tuple[Path, ...] = (),
         kernel_variant: str = "") -> BootResult:
    """Boots `topology`, runs `scenarios` in order in one guest, returns their results.
    `extra_binaries` (same architecture as `binary`) are in the guest's /bin too,
    the `host_trees` directories at their host paths. `kernel_variant` (a key of
    KERNEL_VARIANTS) boots that kernel instead of the architecture's default.

    Raises VmError (with the console tail) if the guest does not come up, dies, or
    does not finish within `timeout` seconds (default: boot allowance + the sum of
    the scenario timeouts, at most MAX_BOOT_SECONDS; $NUMAPROBE_VM_TIMEOUT overrides). The initramfs, console
    and results channel are kept in $NUMAPROBE_VM_KEEP/<topology> when that is set."""
    binary = Path(binary or default_binary())
    if not binary.is_file():
        raise HarnessUnavailable(f"numaprobe binary {binary} does not exist: build it first "
                                 "(cmake --build <dir> --target numaprobe) or set NUMAPROBE_BIN")
    arch = guest_arch(binary)
    if kernel_variant:
        variant = KERNEL_VARIANTS[kernel_variant]
        if variant.elf_machine != arch.elf_machine:
            raise HarnessUnavailable(f"kernel variant {kernel_variant} runs {variant.name} binaries, "
                                     f"not {binary} ({arch.name})")
        arch = variant
    tools = require_tools(arch)
    kernel = ensure_kernel(arch)
    if timeout is None:
        # Scenario limits are for hangs (each scenario is killed at its own limit and
        # the guest carries on); the cap keeps two guests inside ctest's 900 s.
        timeout = float(os.environ.get("NUMAPROBE_VM_TIMEOUT") or
                        min(MAX_BOOT_SECONDS, 90 + sum(s.timeout + 10 for s in scenarios)))
    with contextlib.ExitStack() as stack:
        if workdir is None and os.environ.get("NUMAPROBE_VM_KEEP"):
            workdir = Path(os.environ["NUMAPROBE_VM_KEEP"]) / topology.name
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="numaprobe-vm-")))
        workdir.mkdir(parents=True, exist_ok=True)
        initrd = build_initramfs(workdir / "initrd.cpio.gz", binary, scenarios, tools["busybox"], arch,
                                 kernel.modules, tuple(Path(b) for b in extra_binaries),
                                 tuple(Path(t) for t in host_trees))
        console_path, channel_path = workdir / "console.log", workdir / "results.log"
        channel_path.write_bytes(b"")
        append = f"console={arch.console} quiet panic=-1 rdinit=/init mitigations=off {cmdline}".strip()
        # One host thread for all vCPUs: round-robin TCG switches vCPU on PAUSE (x86)
        # and YIELD (arm64), so
        # the core-to-core ping-pong always finds its partner running. Multi-threaded
        # TCG on a 2-core host leaves vCPU threads descheduled for longer than the
        # probe's 50 ms sample deadline (every c2c sample timed out in trials).
        accel = os.environ.get("NUMAPROBE_VM_ACCEL") or "tcg,thread=single"
        # KVM rejects `-cpu max`'s ARCH_CAPABILITIES MSR on these hosts ("failed to
        # set MSR 0x10a"): $NUMAPROBE_VM_CPU picks another model, e.g. max,-arch-capabilities.
        cpu_model = os.environ.get("NUMAPROBE_VM_CPU") or "max"
        cmd = [str(tools[arch.qemu]), *arch.machine, "-accel", accel, "-cpu", cpu_model,
               *topology.qemu_args(),
               "-kernel", str(kernel.vmlinuz), "-initrd", str(initrd), "-append", append,
               "-nographic", "-no-reboot", "-monitor", "none", "-nic", "none", "-serial", "stdio",
               *(a.format(path=channel_path) for a in arch.results_args)]
        start = time.monotonic()
        with open(console_path, "wb") as console_file:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=console_file,
                                    stderr=subprocess.STDOUT)
            try:
                rc = proc.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
                timed_out = True
        seconds = time.monotonic() - start
        console = console_path.read_bytes().decode(errors="replace")
        channel = channel_path.read_bytes().decode(errors="replace")
        results, done = parse_results(channel)
        where = (f"{arch.name} topology {topology.name} ({len(topology.nodes)} nodes, {topology.n_cpus} CPUs), "
                 f"kernel {kernel.package}, after {seconds:.0f} s; scenarios finished: "
                 f"{sorted(results) or 'none'}")
        if timed_out:
            raise VmError(f"guest timed out (hard limit {timeout:.0f} s); {where}\n"
                          f"QEMU: {shlex.join(cmd)}\n" + console_tail(console))
        if GUEST_READY not in channel:
            raise VmError(f"guest failed to boot (QEMU exit {rc}, /init never started); {where}\n"
                          f"QEMU: {shlex.join(cmd)}\n" + console_tail(console))
        if not done or rc != 0:
            raise VmError(f"guest died before finishing its scenarios (QEMU exit {rc}); {where}\n"
                          + console_tail(console))
        return BootResult(topology, results, console, seconds)
