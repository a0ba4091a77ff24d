# SPDX-License-Identifier: Apache-2.0
"""Host-wide exclusion: every numaprobe process on a host takes one flock(2)
around each probe, so a daemon, a second daemon and a person's `numaprobe probe`
never measure at the same time. The test holds the lock itself, as another
numaprobe process would, and checks that nothing is probed until it lets go."""
import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from daemon import Daemon, exit_allowance, exit_decision_seconds, parse_metrics, write_config

SLOWDOWN = 5 if os.environ.get("NUMAPROBE_SANITIZED") == "1" else 1
WAITING = "is held by pid"


class HeldLock:
    """Holds an exclusive flock on `path` like a probing numaprobe process."""

    def __init__(self, path):
        self.f = open(path, "a+")
        fcntl.flock(self.f, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def release(self):
        if not self.f.closed:
            fcntl.flock(self.f, fcntl.LOCK_UN)
            self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def runs_total(metrics_text):
    return sum(v for _, v in parse_metrics(metrics_text).get("numaprobe_probe_runs_total", []))


def lock_wait_seconds(metrics_text):
    return sum(v for _, v in parse_metrics(metrics_text).get("numaprobe_probe_lock_wait_seconds_total", []))


def test_daemon_probes_nothing_while_another_process_probes(numaprobe_bin, tmp_path):
    config = write_config(str(tmp_path))
    lock_path = str(tmp_path / "probe.lock")
    with HeldLock(lock_path) as held, Daemon(numaprobe_bin, config) as d:
        d.wait_for(lambda: WAITING in d.logs(), what="the daemon to notice the held lock")
        # Published while the wait goes on, not only once it is over: a
        # second of it, by the daemon's clock (the seconds here a hang limit).
        d.wait_for(lambda: lock_wait_seconds(d.metrics()) >= 1, what="a second of the wait published")
        held_metrics = d.metrics()
        assert runs_total(held_metrics) == 0, "a probe ran while another process held the lock"
        assert d.get("/-/ready")[0] == 503
        waiting = lock_wait_seconds(held_metrics)
        # The holder is named (this test), in the log and while the wait lasts in a metric.
        assert f"is held by pid {os.getpid()} (uid {os.getuid()}, " in d.logs(), d.logs()[-2000:]
        holder = parse_metrics(held_metrics)["numaprobe_probe_lock_holder_info"]
        assert [labels["pid"] for labels, _ in holder] == [str(os.getpid())], holder
        held.release()
        d.wait_ready()
        body = d.metrics()
    m = parse_metrics(body)
    # The whole wait, counted on from what was published during it.
    waited = lock_wait_seconds(body)
    assert waited >= waiting, (waited, waiting)
    assert "numaprobe_probe_lock_holder_info" not in m, "a holder is named while no probe waits"
    assert lock_path in d.logs()


def test_any_user_can_hold_the_lock_and_is_named(numaprobe_bin, tmp_path):
    """The threat docs/security.md ("The probe lock") accepts and makes
    visible: any local user who can open the 0644 lock file can flock it and
    stall every probe. The daemon names that user's process, not "another
    numaprobe process"."""
    if os.geteuid() != 0:
        pytest.skip("needs root to hold the lock as another user")
    # pytest's tmp_path sits in a 0700 directory of root's: nobody could not
    # reach a lock file there.
    where = tempfile.mkdtemp(prefix="numaprobe-lock-")
    os.chmod(where, 0o755)
    lock_path = os.path.join(where, "probe.lock")
    config = write_config(str(tmp_path), probe_lock_file=lock_path)
    try:
        with Daemon(numaprobe_bin, config) as d:
            d.wait_ready()
            ready_r, ready_w = os.pipe()
            holder = os.fork()
            if holder == 0:
                try:
                    os.close(ready_r)
                    os.setgroups([])
                    os.setgid(65534)
                    os.setuid(65534)
                    f = open(lock_path)
                    fcntl.flock(f, fcntl.LOCK_EX)
                    os.write(ready_w, b"x")
                    time.sleep(60)
                finally:
                    os._exit(0)
            os.close(ready_w)  # a child that fails ends the read below with b""
            try:
                assert os.read(ready_r, 1) == b"x", "the child as nobody could not take the lock"
                d.wait_for(lambda: f"is held by pid {holder} (uid 65534, " in d.logs(), what="the holder named")
                d.wait_for(lambda: any(labels.get("uid") == "65534" for labels, _ in
                                       parse_metrics(d.metrics()).get("numaprobe_probe_lock_holder_info", [])),
                           what="the holder in the metric")
            finally:
                os.close(ready_r)
                os.kill(holder, signal.SIGKILL)
                os.waitpid(holder, 0)
            assert d.stop()[0] == 0
    finally:
        shutil.rmtree(where, ignore_errors=True)


def test_daemon_stops_within_a_second_while_waiting_for_the_lock(numaprobe_bin, tmp_path):
    """A probe blocked on another process's lock does not hold up a stop: the
    daemon decides to exit within a second (its own log's timestamps), and the
    process is gone within what exiting takes on this machine now
    (exit_allowance: a reference timed right after)."""
    config = write_config(str(tmp_path))
    with HeldLock(str(tmp_path / "probe.lock")), Daemon(numaprobe_bin, config) as d:
        d.wait_for(lambda: WAITING in d.logs(), what="the daemon to wait for the lock")
        code, took = d.stop()
        reference = d.reference_seconds()
    logs = d.logs()
    assert code == 0, logs
    decided = exit_decision_seconds(logs)
    assert decided < 1.0 * SLOWDOWN, f"{decided:.2f} s from SIGTERM to the exit decision\n{logs[-3000:]}"
    print(f"decided {decided:.2f} s, gone {took:.2f} s, reference {reference:.2f} s")
    assert took < exit_allowance(decided, reference), f"{took:.2f} s, reference {reference:.2f} s\n{logs[-3000:]}"


def test_cli_probe_waits_for_the_lock_then_measures(numaprobe_bin, tmp_path):
    lock_path = str(tmp_path / "probe.lock")
    with HeldLock(lock_path) as held:
        proc = subprocess.Popen(
            [numaprobe_bin, "probe", "--tests", "latency", "--loads", "5000", "--samples", "3",
             "--latency-buffer", "16MiB", "--format", "json", "--lock-file", lock_path],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2)
        still_waiting = proc.poll() is None
        held.release()
        out, err = proc.communicate(timeout=120)
    assert still_waiting, f"probe finished while the lock was held:\n{err}"
    assert WAITING in err and lock_path in err, err
    assert proc.returncode == 0, err
    assert '"outcome": "ok"' in out


def test_cli_probe_takes_the_default_host_lock(numaprobe_bin):
    """Without --lock-file the CLI uses /run/lock/numaprobe.lock, the daemon's default."""
    default = "/run/lock/numaprobe.lock"
    if not os.path.isdir("/run/lock"):
        if os.environ.get("CI") == "true":
            pytest.fail("/run/lock is missing on a CI host")
        pytest.skip("no /run/lock on this host")
    with HeldLock(default) as held:
        proc = subprocess.Popen(
            [numaprobe_bin, "probe", "--tests", "latency", "--loads", "5000", "--samples", "3",
             "--latency-buffer", "16MiB"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        still_waiting = proc.poll() is None
        held.release()
        _, err = proc.communicate(timeout=120)
    assert still_waiting and default in err, err
    assert proc.returncode == 0, err


def test_unusable_lock_files_are_named(run, tmp_path):
    missing = str(tmp_path / "no" / "such" / "dir" / "numaprobe.lock")
    config = write_config(str(tmp_path), probe_lock_file=missing)
    r = run("serve", "--config.file", config, "--web.listen-address", "127.0.0.1:0", timeout=10)
    assert r.returncode == 1, r.stderr
    assert missing in r.stderr and "No such file" in r.stderr, r.stderr

    r = run("probe", "--tests", "latency", "--lock-file", str(tmp_path))
    assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr

    relative = tmp_path / "relative.yaml"
    relative.write_text("probe_lock_file: run/numaprobe.lock\n")
    r = run("check-config", str(relative))
    assert r.returncode == 1 and "line 1: probe_lock_file" in r.stderr, r.stderr


def test_cli_probe_without_the_lock_directory_measures_and_warns(run, tmp_path):
    """An initramfs or a slim container has no /run/lock: nobody can hold a
    lock there either, so the CLI measures and says it ran unexcluded; serve
    refuses (test_unusable_lock_files_are_named) because a daemon must not lose
    exclusion silently."""
    missing = str(tmp_path / "no-run-lock" / "numaprobe.lock")
    r = run("probe", "--tests", "latency", "--samples", "3", "--format", "json", "--lock-file", missing)
    assert "without host-wide exclusion" in r.stderr and missing in r.stderr, r.stderr
    rec = json.loads(r.stdout)["latency"][0]
    if r.returncode != 0:
        assert rec["outcome"] == "disturbed" and rec["discards"]["context_switch"] > 0, rec
    else:
        assert rec["outcome"] == "ok" and rec["median_seconds"] > 0, rec
    assert not os.path.exists(missing), "the CLI must not create the missing directory"


def test_a_reload_with_an_unusable_lock_file_keeps_the_running_config(numaprobe_bin, tmp_path):
    config = write_config(str(tmp_path))
    with Daemon(numaprobe_bin, config) as d:
        d.wait_ready()
        write_config(str(tmp_path), probe_lock_file=str(tmp_path / "missing" / "numaprobe.lock"))
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: "reload failed" in d.logs(), what="the failed reload")
        assert "numaprobe_config_last_reload_successful 0" in d.metrics()
        assert d.proc.poll() is None
