# SPDX-License-Identifier: Apache-2.0
"""A full or read-only state directory: the daemon keeps serving metrics, says
so (numaprobe_state_last_write_successful 0, numaprobe_state_write_failures_total,
a log line naming the path and the errno text) and writes the state file once
space or writability returns. Root (CI): the state directory is a tmpfs of its
own, remounted read-only or filled up. Not root: read-only is a chmod 0555
directory (modes bind a non-root user); "full" needs a mount and is skipped."""
import json
import os
import shutil
import subprocess

import pytest

from daemon import Daemon, has_sample, parse_metrics, write_config


def value(d, name):
    return parse_metrics(d.metrics())[name][0][1]


def mount_tmpfs(path, size):
    """Mounts a tmpfs at path; skips (or fails under CI=true, where the tool is
    there and must work) when this process cannot mount."""
    if os.geteuid() != 0:
        pytest.skip("not root: cannot mount a tmpfs for the state directory")
    if shutil.which("mount") is None:
        pytest.skip("no mount(8) on this machine")
    os.makedirs(path)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        message = f"cannot mount a tmpfs at {path}: {r.stderr.strip()}"
        if os.environ.get("CI") == "true":
            pytest.fail(message + " (CI=true: mount is present, so it must work)")
        pytest.skip(message)


@pytest.fixture
def tmpfs(tmp_path):
    mounted = []

    def make(size):
        path = str(tmp_path / "mnt")
        mount_tmpfs(path, size)
        mounted.append(path)
        return path

    yield make
    for path in mounted:
        subprocess.run(["umount", "-l", path], check=False)


def assert_failing_then_serving(d, state_dir, errno_text):
    d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_state_last_write_successful 0"), timeout=60,
               what="the failed state write to show in the metric")
    failures = value(d, "numaprobe_state_write_failures_total")
    assert failures >= 1
    # Still serving figures, and the log names the path and the errno text.
    d.wait_for(lambda: "numaprobe_memory_latency_seconds" in parse_metrics(d.metrics()),
               what="latency figures while the state write fails")
    lines = [l for l in d.logs().splitlines() if "level=error" in l and "cannot save the state" in l]
    assert lines, d.logs()[-3000:]
    assert state_dir in lines[0] and errno_text in lines[0], lines[0]
    # Retried (every 5 s), logged once.
    d.wait_for(lambda: value(d, "numaprobe_state_write_failures_total") > failures, what="a retry")
    assert len([l for l in d.logs().splitlines() if "level=error" in l and "cannot save the state" in l]) == 1
    assert not os.path.exists(os.path.join(state_dir, "state.json"))


def assert_recovers(d, state_dir):
    d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_state_last_write_successful 1"), timeout=60,
               what="the state write to succeed again")
    assert "is written again after" in d.logs()
    with open(os.path.join(state_dir, "state.json")) as f:
        state = json.load(f)
    assert state["format"] == 2 and state["series"], state
    assert any("baseline" in series for series in state["series"]), "the armed baselines are saved"


def test_read_only_state_directory(numaprobe_bin, tmp_path, tmpfs):
    if os.geteuid() == 0:
        mnt = tmpfs("1m")
        state_dir = os.path.join(mnt, "state")
        os.mkdir(state_dir, 0o700)
        subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
        make_writable = lambda: subprocess.run(["mount", "-o", "remount,rw", mnt], check=True)
        errno_text = "Read-only file system"
    else:
        state_dir = str(tmp_path / "state")
        os.mkdir(state_dir, 0o555)
        make_writable = lambda: os.chmod(state_dir, 0o700)
        errno_text = "Permission denied"
    config = write_config(str(tmp_path), state_directory=state_dir)
    with Daemon(numaprobe_bin, config) as d:
        assert_failing_then_serving(d, state_dir, errno_text)
        make_writable()
        assert_recovers(d, state_dir)
        assert d.stop()[0] == 0


def test_full_state_directory(numaprobe_bin, tmp_path, tmpfs):
    mnt = tmpfs("16k")
    state_dir = os.path.join(mnt, "state")
    os.mkdir(state_dir, 0o700)
    filler = os.path.join(mnt, "filler")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 512)
    except OSError:
        pass  # ENOSPC: the tmpfs is full
    finally:
        os.close(fd)
    config = write_config(str(tmp_path), state_directory=state_dir)
    with Daemon(numaprobe_bin, config) as d:
        assert_failing_then_serving(d, state_dir, "No space left on device")
        os.unlink(filler)
        assert_recovers(d, state_dir)
        assert d.stop()[0] == 0
