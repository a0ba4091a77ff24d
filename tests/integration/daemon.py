# SPDX-License-Identifier: Apache-2.0
"""Runs the real `numaprobe serve` on a free loopback port for integration tests."""
import datetime
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

# Small buffers and short samples so a round takes well under a second of CPU;
# the schedule and budget are the test's to choose. 16 MiB rather than 64: most
# of a round's CPU is making and placing the buffers, 4x less at 16 MiB (TSan:
# 0.18 against 0.6-0.9 CPU-s for the latency probe; docs/testing.md), so rounds,
# and the tests that wait for them, come sooner. A chase under four times the
# last-level cache is flushed before each sample at either size, so its loads
# still come from memory.
# Sanitizer builds run every probe several times slower, and their SCHED_IDLE
# probes lose more rounds to a busy machine (disturbed runs, retried): the
# default waits scale with it.
SANITIZED_SLOWDOWN = 5 if os.environ.get("NUMAPROBE_SANITIZED") == "1" else 1

FAST_CONFIG = """\
probes:
  latency: {{stride_bytes: 128, buffer_size: {buffer_size}, samples: 5, loads_per_sample: {loads}}}
  bandwidth: {{ops: [read, write, copy], buffer_size: {buffer_size}, burst_size: 4MiB, bursts: 3}}
  core_to_core: {{samples: 5, round_trips: 500}}
schedule: {{duty_cycle: {duty_cycle}, interval: {interval}, jitter: 0.1, priority: {priority}}}
memory: {{budget: 512MiB, pages: {pages}}}
baseline: {{rounds: {baseline_rounds}}}
state_directory: {state_directory}
probe_lock_file: {probe_lock_file}
"""


def write_config(directory, duty_cycle=0.2, interval="1s", pages="auto", baseline_rounds=1, state_directory=None,
                 priority="idle", loads=5000, probe_lock_file=None, buffer_size="16MiB"):
    # Each test's own lock: a developer's running numaprobe must not change results.
    path = os.path.join(directory, "numaprobe.yaml")
    with open(path, "w") as f:
        f.write(FAST_CONFIG.format(duty_cycle=duty_cycle, interval=interval, pages=pages, priority=priority, loads=loads,
                                   buffer_size=buffer_size,
                                   baseline_rounds=baseline_rounds,
                                   state_directory=state_directory or os.path.join(directory, "state"),
                                   probe_lock_file=probe_lock_file or os.path.join(directory, "probe.lock")))
    return path


def readable_sanitizer_options(directory):
    """The *SAN_OPTIONS of this process, each suppressions file copied into
    `directory`, for a daemon run under another user id: the sanitized daemon
    exits when it cannot read the file (the TSan stage of a clone in
    `mktemp -d`, a 0700 directory, did)."""
    env = {}
    for name, value in os.environ.items():
        if not name.endswith("SAN_OPTIONS"):
            continue
        options = []
        for option in value.split(":"):
            key, _, path = option.partition("=")
            if key == "suppressions" and path:
                copy = os.path.join(directory, f"{name.lower()}.supp")
                shutil.copy2(path, copy)
                os.chmod(copy, 0o644)
                option = f"suppressions={copy}"
            options.append(option)
        env[name] = ":".join(options)
    return env



class Daemon:
    """A running `numaprobe serve`; use as a context manager."""

    def __init__(self, binary, config_file, extra_args=(), env=None, preexec_fn=None):
        self.binary = binary
        self.preexec_fn = preexec_fn  # run in the child before exec (limits, user, cgroup)
        self.config_file = config_file
        self.extra_args = list(extra_args)
        self.env = env  # extra environment variables, on top of this process's
        self.proc = None
        self.port = None
        self.log_path = tempfile.mktemp(prefix="numaprobe-log-")

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.kill()

    def start(self, timeout=15):
        self.log = open(self.log_path, "w+")
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--config.file", self.config_file,
             "--web.listen-address", "127.0.0.1:0", "--log.level", "debug", *self.extra_args],
            stdout=self.log, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, **self.env} if self.env else None, preexec_fn=self.preexec_fn)
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = re.search(r"Listening on port (\d+)", self.logs())
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"numaprobe exited with {self.proc.returncode}:\n{self.logs()}")
            time.sleep(0.05)
        raise AssertionError(f"numaprobe did not start listening within {timeout}s:\n{self.logs()}")

    def logs(self):
        with open(self.log_path) as f:
            return f.read()

    def request(self, path, timeout=5):
        """(status, headers, body) of GET path, whatever the status."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=timeout) as r:
                return r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def get(self, path, timeout=5):
        """(status, content_type, body) of GET path."""
        status, headers, body = self.request(path, timeout)
        return status, headers.get("Content-Type", ""), body

    def metrics(self):
        status, _, body = self.get("/metrics")
        assert status == 200, body
        return body

    def wait_ready(self, timeout=60 * SANITIZED_SLOWDOWN):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.get("/-/ready")[0] == 200:
                return
            assert self.proc.poll() is None, self.logs()
            time.sleep(0.2)
        raise AssertionError(f"not ready within {timeout}s:\n{self.logs()}")

    def wait_for(self, predicate, timeout=30 * SANITIZED_SLOWDOWN, what="condition"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}:\n{self.logs()[-4000:]}")

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, sig=None, timeout=60 * SANITIZED_SLOWDOWN):
        """Sends `sig` (default SIGTERM); returns (exit code, seconds it took). The
        timeout is a hang limit only, failing with the log: how long an exit
        may take is the machine's (beside two busy loops a SCHED_IDLE probe
        left behind took 2.6 s to end). Tests that promise an exit time assert
        `took` against exit_allowance()."""
        sig = signal.SIGTERM if sig is None else sig  # (in the class body, `signal` is the method above)
        start = time.monotonic()
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running {timeout} s after {signal.Signals(sig).name}:\n"
                                 f"{self.logs()[-4000:]}") from None
        return code, time.monotonic() - start

    def reference_seconds(self, runs=3):
        """Wall seconds of `numaprobe check-config` on this daemon's config,
        `runs` times, at the priority its probes run at (schedule.priority:
        SCHED_IDLE or nice 19): the same binary starting, reading the config,
        planning on this host and exiting, in whatever conditions the machine
        is in now. The reference a process's exit is held to (exit_allowance):
        the exit waits for every thread, the probe's too, and on busy CPUs a
        thread at that priority waits longest (beside two busy loops a run
        took 0.75-1.3 s at SCHED_IDLE, 0.04-0.08 s at normal priority)."""
        with open(self.config_file) as f:
            nice19 = re.search(r"\bpriority: *nice19\b", f.read()) is not None
        lower = (lambda: os.nice(19)) if nice19 else (
            lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)))
        start = time.monotonic()
        for _ in range(runs):
            subprocess.run([self.binary, "check-config", self.config_file], capture_output=True, preexec_fn=lower,
                           env={**os.environ, **self.env} if self.env else None, timeout=120)
        return time.monotonic() - start

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# What a daemon's exit may take after it decided to stop (joining its threads,
# freeing the probe buffers, exiting, or leaving a probe behind that the
# kernel must still schedule to end it): work, and waiting for a CPU at the
# probes' priority, so it is held to a reference timed in the same run
# (Daemon.reference_seconds), not to a number of seconds. Measured on the
# 2-CPU machine (three check-configs a reference): at load average 15, exits
# of 0.03-0.17 s after the decision against references of 0.04-0.12 s; beside
# two busy loops, 0.02-2.6 s (2.6 s when the SCHED_IDLE probe was left
# behind mid-sample) against references of 1.4-6.2 s. A fixed 5 s held the
# latter by less than 2x.
EXIT_WORK_PER_REFERENCE = 4


def exit_allowance(decided_seconds, reference_seconds):
    """The longest a stop may take from SIGTERM until the process is gone: the
    exit decision as the daemon logged it, then EXIT_WORK_PER_REFERENCE
    references."""
    return decided_seconds + EXIT_WORK_PER_REFERENCE * reference_seconds


def parse_ts(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")


def exit_decision_seconds(logs):
    """Seconds from the daemon's "Received SIGTERM" log line to its decision
    to exit (the probe stopped, or left behind)."""
    stamps = {key: re.search(r"ts=(\S+) .*(?:" + key + ")", logs) for key in ("Received SIGTERM", "exiting without it|stopped")}
    assert all(stamps.values()), logs
    return (parse_ts(stamps["exiting without it|stopped"].group(1)) -
            parse_ts(stamps["Received SIGTERM"].group(1))).total_seconds()


def parse_metrics(text):
    """{name: [(labels dict, value)]} from the text exposition format."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$', line)
        assert m, f"unparseable exposition line: {line!r}"
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        out.setdefault(m.group(1), []).append((labels, float(m.group(4))))
    return out


def has_sample(text, sample):
    """True if `sample` ("name{labels} value") is a whole line of the exposition:
    a substring test would also match HELP texts."""
    return sample in text.splitlines()


def cpu_seconds_of(pid):
    """utime + stime of a process, in seconds (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def cpu_pressure_seconds():
    """Seconds in which some runnable task waited for a CPU, machine-wide
    (/proc/pressure/cpu "some" total); None without PSI."""
    try:
        with open("/proc/pressure/cpu") as f:
            some = f.readline().split()
    except OSError:
        return None
    return int(dict(field.split("=") for field in some[1:])["total"]) / 1e6


def run_queue_wait_seconds(pid):
    """Seconds the threads of `pid` alive now have spent runnable but waiting
    for a CPU (/proc/PID/task/*/schedstat, second field): the kernel's own
    evidence that other work held the CPUs this process wanted. Threads that
    exited are not counted, so it can only understate (a probe run that timed
    out, its partner CPU starved, shows in numaprobe_probe_runs_total
    instead). None without schedstat."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # the thread exited meanwhile
    return total / 1e9


def need(tool):
    """The path of a command-line tool a test drives (curl, openssl): a skip
    where it is missing, a failure under CI, where .ci/install-deps installs it."""
    import pytest  # here, so that the benchmarks (bench/) import this module with the standard library alone
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{tool} is required (.ci/install-deps installs it)")
        pytest.skip(f"{tool} not installed")
    return path
