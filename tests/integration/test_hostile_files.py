# SPDX-License-Identifier: Apache-2.0
"""Hostile files and local users against the real daemon (docs/security.md,
"Files"): links planted in the
state directory where root writes, a FIFO, /dev/zero or 5 MiB of '[' at the
state file or the operator's request file, an unreadable or corrupt state
file, a request in a read-only directory, a second `serve` that cannot bind, configs too large, too deep or
full of unknown keys, bytes of a file in the log. Each test asserts the clear
outcome: an error naming the file or the limit, a daemon that keeps serving
and stops on SIGTERM, and nothing of the operator's lost or overwritten.

These are the specification the state code keeps, whatever its shape."""
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time

import pytest

from daemon import (SANITIZED_SLOWDOWN, Daemon, exit_allowance, exit_decision_seconds, has_sample, parse_metrics,
                    readable_sanitizer_options, write_config)

NOBODY = 65534


def value(d, name):
    return parse_metrics(d.metrics())[name][0][1]


def vm_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M).group(1))


def as_nobody(function):
    """Runs `function` in a child process under uid/gid 65534: what the
    daemon's own user (who owns the state directory) could do."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            function()
            os._exit(0)
        except BaseException:  # noqa: B036 - the child must never return into pytest
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


@pytest.fixture
def open_dir():
    """A directory every user can enter (the build and pytest's tmp_path may
    sit in a 0700 one), removed afterwards."""
    path = tempfile.mkdtemp(prefix="numaprobe-hostile-")
    os.chmod(path, 0o755)
    yield path
    subprocess.run(["umount", "-l", os.path.join(path, "mnt")], capture_output=True)
    shutil.rmtree(path, ignore_errors=True)


def test_no_write_follows_a_link_planted_in_the_state_directory(run, open_dir):
    """The privilege escalation, as it was shown: the state directory's owner plants
    links at every name a root writer could predict; root's `baseline reset`
    and `baseline accept` (which write baseline-request.json) must neither
    write through them nor chown their target. Before the fix the root-owned
    0600 victim ended up nobody's, holding the operator's marker."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the attack is on root's writes into another user's directory")
    state_dir = os.path.join(open_dir, "stx")
    os.mkdir(state_dir, 0o755)
    os.chown(state_dir, NOBODY, NOBODY)
    victim = os.path.join(open_dir, "victim")
    with open(victim, "w") as f:
        f.write("root's secret\n")
    os.chmod(victim, 0o600)
    with open("/proc/sys/kernel/ns_last_pid") as f:
        last_pid = int(f.read())

    def plant():
        for name in ("state.json", "baseline-request.json"):
            for pid in range(last_pid + 1, last_pid + 1000):
                os.symlink(victim, os.path.join(state_dir, f".{name}.tmp.{pid}"))
        now = time.time()
        for second in range(120):  # the corrupt copy's names for the next two minutes
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now + second))
            os.symlink(victim, os.path.join(state_dir, f"state.json.corrupt-{stamp}"))
        os.symlink(victim, os.path.join(state_dir, "state.json"))
        os.symlink(victim, os.path.join(state_dir, "baseline-request.json"))

    as_nobody(plant)
    for verb in ("reset", "accept"):
        r = run("baseline", verb, "--state.directory", state_dir, timeout=30)
        assert r.returncode == 0, r.stderr
    st = os.stat(victim)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o600)
    with open(victim) as f:
        assert f.read() == "root's secret\n"
    request = os.path.join(state_dir, "baseline-request.json")
    st = os.lstat(request)
    assert stat.S_ISREG(st.st_mode) and st.st_uid == NOBODY, st
    with open(request) as f:
        assert json.load(f)["action"] == "accept"


def test_fifo_in_the_state_directory_neither_blocks_start_nor_stops_probing(numaprobe_bin, tmp_path):
    """A FIFO at state.json hung start-up before listening (SIGTERM ignored),
    and one swapped in before a SIGHUP stopped probing while /-/healthy said
    200. Now: an error naming the file and its type, probing and serving go
    on, SIGTERM stops the daemon. A SIGHUP reads the operator's request file,
    so that is where the running daemon meets the FIFO."""
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    config = write_config(str(tmp_path), interval="1s", state_directory=str(state_dir))
    request = state_dir / "baseline-request.json"
    with Daemon(numaprobe_bin, config) as d:
        d.wait_ready()
        os.mkfifo(request)
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: f"cannot read {request}: it is a FIFO, not a regular file" in d.logs(),
                   what="the FIFO named in the log")
        rounds = value(d, "numaprobe_rounds_completed_total")
        d.wait_for(lambda: value(d, "numaprobe_rounds_completed_total") > rounds, what="probing to go on")
        assert d.get("/-/healthy")[0] == 200
        code, _ = d.stop()
        assert code == 0, d.logs()
    assert not request.exists(), "a request that cannot be one is removed once reported"
    fifo = state_dir / "state.json"
    os.mkfifo(state_dir / "fifo")
    os.replace(state_dir / "fifo", fifo)  # over the state file the first run wrote
    message = f"cannot read {fifo}: it is a FIFO, not a regular file"
    with Daemon(numaprobe_bin, config) as d:  # listening with the FIFO there from the start
        d.wait_for(lambda: message in d.logs(), what="the FIFO named at start")
        assert d.get("/-/healthy")[0] == 200
        code, took = d.stop()
        reference = d.reference_seconds()
        logs = d.logs()
    # SIGTERM is heard: the exit decision within a second by the daemon's
    # own log, and the process gone within what a reference timed right
    # after allows (exit_allowance), as in test_serve.py's stop tests.
    assert code == 0, logs
    decided = exit_decision_seconds(logs)
    assert decided < 1.0 * SANITIZED_SLOWDOWN, f"{decided:.2f} s from SIGTERM to the exit decision\n{logs[-3000:]}"
    assert took < exit_allowance(decided, reference), f"{took:.2f} s, reference {reference:.2f} s\n{logs[-3000:]}"


def test_dev_zero_link_and_deep_json_are_refused_naming_the_limit(numaprobe_bin, tmp_path):
    """A link to /dev/zero aborted start with an uncaught bad_alloc (exit 134);
    5 MiB of '[' peaked at 403 MB, over the unit's MemoryMax. Now each is an
    error naming the file and what is wrong with it, and the 5 MiB file
    costs about its own size (as the request file a SIGHUP reads; state.json
    goes through the same parser, tests/daemon/state_file_test.cc)."""
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    state = state_dir / "state.json"
    os.symlink("/dev/zero", state)
    config = write_config(str(tmp_path), interval="600s", state_directory=str(state_dir))
    with Daemon(numaprobe_bin, config) as d:
        d.wait_for(lambda: f"cannot read {state}: it is a symbolic link, which is not followed here" in d.logs(),
                   what="the link named")
        d.wait_ready()
        size = 5 * 1024 * 1024
        (state_dir / "baseline-request.json").write_text("[" * size)
        peak_before = vm_kib(d.proc.pid, "VmHWM")
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: "nested deeper than the limit of 32 levels" in d.logs(), what="the nesting limit named")
        grown = (vm_kib(d.proc.pid, "VmHWM") - peak_before) * 1024
        if SANITIZED_SLOWDOWN == 1:  # a sanitizer's shadow memory says nothing of the daemon's own
            assert grown < 4 * size, f"the peak grew by {grown} bytes for a {size}-byte file"
        assert d.get("/-/healthy")[0] == 200
        assert d.stop()[0] == 0, d.logs()


def test_unreadable_state_file_is_kept_not_overwritten(numaprobe_bin, open_dir):
    """EACCES is not corruption: the file is neither adopted nor replaced,
    the baseline lives in memory, and the refused write is counted. Root
    reads anything, so as root the daemon runs as nobody."""
    state_dir = os.path.join(open_dir, "state")
    os.mkdir(state_dir, 0o755)
    state = os.path.join(state_dir, "state.json")
    original = '{"format": 2, "what": "the operator\'s, unread"}\n'
    with open(state, "w") as f:
        f.write(original)
    os.chmod(state, 0o600)
    config = write_config(open_dir, interval="1s", state_directory=state_dir)
    binary, preexec, env = numaprobe_bin, None, None
    if os.geteuid() == 0:
        os.chown(state_dir, NOBODY, NOBODY)  # the daemon's directory; the file stays root's
        os.chmod(config, 0o644)
        with open(os.path.join(open_dir, "probe.lock"), "w"):
            pass  # nobody cannot create it in a directory of root's; it opens it read-only
        os.chmod(os.path.join(open_dir, "probe.lock"), 0o644)
        binary = os.path.join(open_dir, "numaprobe")
        shutil.copy2(numaprobe_bin, binary)
        env = readable_sanitizer_options(open_dir)

        def preexec():
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
    else:
        os.chmod(state, 0)
    with Daemon(binary, config, env=env, preexec_fn=preexec) as d:
        d.wait_for(lambda: f"cannot read {state}: Permission denied" in d.logs(), what="the unreadable file named")
        d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_state_last_write_successful 0"), timeout=60,
                   what="the refused write in the metric")
        assert "nothing is written over it" in d.logs()
        assert 'origin="state_file_unreadable"' in d.metrics()
        assert d.get("/-/healthy")[0] == 200
        assert d.stop()[0] == 0
    os.chmod(state, 0o600)
    with open(state) as f:
        assert f.read() == original


def test_corrupt_state_file_is_kept_as_a_copy_before_it_is_replaced(numaprobe_bin, tmp_path):
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    garbage = b"\x00{not a state file\xff"
    (state_dir / "state.json").write_bytes(garbage)
    config = write_config(str(tmp_path), interval="1s", state_directory=str(state_dir))
    with Daemon(numaprobe_bin, config) as d:
        d.wait_for(lambda: "kept as state.json.corrupt-" in d.logs(), timeout=60, what="the copy")
        d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_state_last_write_successful 1"), what="the new file")
    copies = [p for p in state_dir.iterdir() if p.name.startswith("state.json.corrupt-")]
    assert len(copies) == 1, list(state_dir.iterdir())
    assert copies[0].read_bytes() == garbage
    assert json.loads((state_dir / "state.json").read_text())["format"] == 2


def test_second_serve_that_cannot_bind_leaves_the_request_to_the_running_daemon(numaprobe_bin, run, tmp_path):
    """The second `serve` acted on the state (and consumed a `baseline accept`)
    before failing to bind: the running daemon never applied it. The request
    is written as `numaprobe baseline accept` writes it, without the SIGHUP
    that command sends, so that it waits in the directory."""
    state_dir = tmp_path / "state"
    config = write_config(str(tmp_path), interval="600s", state_directory=str(state_dir))
    with Daemon(numaprobe_bin, config) as d:
        d.wait_ready()
        request = {"action": "accept", "id": "test-second-serve"}
        (state_dir / "baseline-request.json").write_text(json.dumps(request))
        r = run("serve", "--config.file", config, "--web.listen-address", f"127.0.0.1:{d.port}", timeout=30)
        assert r.returncode == 1 and "cannot listen on" in r.stderr, r.stderr
        assert json.loads((state_dir / "baseline-request.json").read_text()) == request
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: "the current level is accepted as the new baseline" in d.logs(), what="the marker applied")
        # The log line comes before the snapshot is published: on a busy
        # machine a scrape right after it can still show the old origin.
        d.wait_for(lambda: 'origin="accepted"' in d.metrics(), what="the accepted baseline's origin published")


def test_request_in_a_read_only_directory_is_acted_on_once(numaprobe_bin, run, open_dir):
    """With the request's removal failing, every SIGHUP restarted the
    baseline recording while numaprobe_state_last_write_successful said 1.
    Now it is acted on once (remembered by its id), the failed removal is
    counted, and it is removed once the directory is writable again."""
    def make_state(state_dir):
        config = write_config(open_dir, interval="1s", baseline_rounds=100, state_directory=state_dir)
        with Daemon(numaprobe_bin, config) as d:
            d.wait_ready()
            d.wait_for(lambda: os.path.exists(os.path.join(state_dir, "state.json")), what="a state file")
        assert run("baseline", "reset", "--state.directory", state_dir).returncode == 0

    if os.geteuid() == 0:
        mnt = os.path.join(open_dir, "mnt")
        os.mkdir(mnt)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt], capture_output=True, text=True)
        if r.returncode != 0:
            if os.environ.get("CI") == "true":
                pytest.fail(f"cannot mount a tmpfs: {r.stderr}")
            pytest.skip(f"cannot mount a tmpfs: {r.stderr}")
        state_dir = os.path.join(mnt, "state")
        os.mkdir(state_dir, 0o700)
        make_state(state_dir)
        subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
        writable = lambda: subprocess.run(["mount", "-o", "remount,rw", mnt], check=True)
    else:
        state_dir = os.path.join(open_dir, "state")
        os.mkdir(state_dir, 0o700)
        make_state(state_dir)
        os.chmod(state_dir, 0o555)
        writable = lambda: os.chmod(state_dir, 0o700)
    request = os.path.join(state_dir, "baseline-request.json")
    assert os.path.exists(request)
    config = write_config(open_dir, interval="1s", baseline_rounds=100, state_directory=state_dir)
    recording = "recording a new baseline of every series"
    with Daemon(numaprobe_bin, config) as d:
        d.wait_for(lambda: "the baseline was reset" in d.logs(), what="the request acted on")
        d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_state_last_write_successful 0"), what="the failure")
        assert "its removal retried with every save" in d.logs(), d.logs()[-2000:]
        for reload in (1, 2, 3):
            d.signal(signal.SIGHUP)
            d.wait_for(lambda: d.logs().count("configuration unchanged") == reload, what=f"reload {reload}")
        time.sleep(0.5)  # the scheduler re-reads the request between probes
        assert d.logs().count(recording) == 1, d.logs()
        assert d.logs().count("the baseline was reset") == 1
        writable()
        d.wait_for(lambda: "the operator's request" in d.logs() and "is removed" in d.logs(), timeout=60,
                   what="the removal retried with a save")
        d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_state_last_write_successful 1"), what="the metric")
        assert not os.path.exists(request)
        assert d.logs().count(recording) == 1


def test_config_limits_are_named_and_memory_is_returned(numaprobe_bin, run, tmp_path):
    """A valid 1 MiB config (cpus: [1,1,...]) kept 266 MB resident across
    later reloads; YAML nested past ~500 levels was called "bad file"; a
    config of unknown keys logged tens of thousands of lines per SIGHUP."""
    config = write_config(str(tmp_path), interval="600s")
    original = open(config).read()
    deep = tmp_path / "deep.yaml"
    deep.write_text("targets: " + "[" * 600 + "]" * 600 + "\n")
    r = run("check-config", str(deep))
    assert r.returncode == 1 and "nested deeper than the limit of 64 levels" in r.stderr, r.stderr
    with Daemon(numaprobe_bin, config) as d:
        d.wait_ready()
        finished = ("configuration unchanged", "configuration reloaded", "reload failed: keeping the running configuration")

        def reload(text):
            done = sum(d.logs().count(line) for line in finished)
            with open(config, "w") as f:
                f.write(text)
            d.signal(signal.SIGHUP)
            d.wait_for(lambda: sum(d.logs().count(line) for line in finished) > done, what="the reload")

        reload(original)
        rss_before = vm_kib(d.proc.pid, "VmRSS")
        peak_before = vm_kib(d.proc.pid, "VmHWM")
        huge = original + "targets:\n  cpus: [" + "1," * 500_000 + "1]\n"
        assert len(huge) > 1_000_000
        reload(huge)
        assert "more than 32768 YAML nodes" in d.logs(), d.logs()[-2000:]
        peak_huge = vm_kib(d.proc.pid, "VmHWM")
        # Within the node limit, a tree of 30,001 nodes is built (refused for
        # its unknown key, so no new plan allocates probe buffers meanwhile),
        # then freed and handed back.
        reload(original + "unknown_list: [" + "0," * 30_000 + "0]\n")
        assert "unknown_list: unknown key" in d.logs()
        reload(original)
        rss_after = vm_kib(d.proc.pid, "VmRSS")
        print(f"VmRSS {rss_before} -> {rss_after} KiB; VmHWM {peak_before} -> {peak_huge} (1 MiB file) -> "
              f"{vm_kib(d.proc.pid, 'VmHWM')} KiB (30,001 nodes)")
        if SANITIZED_SLOWDOWN == 1:
            assert peak_huge - peak_before < 16 * 1024, (peak_before, peak_huge)
            assert rss_after - rss_before < 16 * 1024, (rss_before, rss_after)
        # 10,000 unknown keys: 50 errors and one line counting the rest.
        lines_before = len(d.logs().splitlines())
        reload(original + "".join(f"unknown_{i}: 1\n" for i in range(10_000)))
        new_lines = d.logs().splitlines()[lines_before:]
        errors = [line for line in new_lines if "unknown_" in line]
        assert len(errors) == 50, len(errors)
        assert any("9950 more errors not listed (only the first 50 are)" in line for line in new_lines)
        assert len(new_lines) < 60, len(new_lines)
        assert d.stop()[0] == 0


@pytest.mark.parametrize("log_format", ["json", "logfmt"])
def test_bytes_of_a_file_are_escaped_in_the_log(numaprobe_bin, tmp_path, log_format):
    """Bytes >= 0x80 and control bytes of a config reached the log raw,
    breaking --log.format json (and a terminal)."""
    config = tmp_path / "numaprobe.yaml"
    key = b"k\x80\xff\x1b[31m\xe2\x80\xae\xc3\xa9"  # invalid UTF-8, ESC, U+202E (right-to-left), e-acute
    config.write_bytes(key + b": 1\n")
    r = subprocess.run([numaprobe_bin, "serve", "--config.file", str(config), "--web.listen-address", "127.0.0.1:0",
                        "--log.format", log_format], capture_output=True, timeout=30)
    assert r.returncode == 1
    lines = r.stderr.decode("ascii").splitlines()  # ASCII only: raises on any raw byte
    assert lines
    escaped = r"k\ufffd\ufffd\u001b[31m\u202e\u00e9"
    if log_format == "json":
        records = [json.loads(line) for line in lines]  # every line valid JSON
        assert any("k\ufffd\ufffd\x1b[31m\u202e\u00e9: unknown key" in rec["msg"] for rec in records), records
    assert any(escaped in line for line in lines), lines
