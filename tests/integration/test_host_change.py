# SPDX-License-Identifier: Apache-2.0
"""A kernel/microcode rollout must not overwrite the baseline. The real
daemon is restarted with a changed host fingerprint (test-only overrides) and
figures raised by test-only fault injection; a real Prometheus scrapes its real
/metrics and the drift expression says "regressed since the change".

The overrides and the fault injection are honoured only with
NUMAPROBE_TEST_MODE=1; without it `serve` refuses to start (checked here too).
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.parse

import json
import pytest

from daemon import Daemon, parse_metrics, write_config

NEW_KERNEL = "6.6.13-amd64"
NEW_MICROCODE = "0xtest1"
# The injected regression. Well above the 1.06 checked below: the real latency
# of a shared test machine moves by up to ~10% between phases when other
# processes load the memory bus (seen beside a sanitizer build), and under TSan,
# where every chased load is instrumented, by over 25% (the accepted baseline
# came out 1.6% over the first at a scale of 1.3, with other sanitized tests
# starting beside it). The test is about what happens to a regression, not
# about resolving a small one.
SCALE = 2.0

# Mirrors the NumaProbeLatencyDrift alert (grafana/rules): the smoothed figure against the baseline, over the
# threshold, joined with the host change it happened after so the alert can
# name it. Kept self-contained here so this test does not depend on that file.
DRIFT_SINCE_CHANGE = (
    "(numaprobe_memory_latency_recent_median_seconds / numaprobe_memory_latency_baseline_seconds > 1.06)"
    " * on(instance, job) group_left(field, before, after)"
    ' (numaprobe_host_change_timestamp_seconds{field="kernel"} * 0 + 1)')


def test_host_hooks_are_refused_outside_test_mode(run, tmp_path):
    config = write_config(str(tmp_path))
    env = {**os.environ, "NUMAPROBE_TEST_SCALE_LATENCY": "1.15"}
    env.pop("NUMAPROBE_TEST_MODE", None)
    r = subprocess.run([os.environ["NUMAPROBE_BIN"], "serve", "--config.file", config,
                        "--web.listen-address", "127.0.0.1:0"], capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "NUMAPROBE_TEST_MODE=1 is not" in r.stdout + r.stderr


def latency_baseline(m):
    return {tuple(sorted(labels.items())): value for labels, value in m["numaprobe_memory_latency_baseline_seconds"]}


def samples(m, name):
    return m.get(name, [])


class Prometheus:
    def __init__(self, target, directory):
        binary = shutil.which("prometheus") or "/usr/bin/prometheus"
        if not os.path.exists(binary):
            pytest.skip("prometheus not installed (Debian: apt-get install prometheus)")
        config = os.path.join(directory, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global: {scrape_interval: 1s, evaluation_interval: 1s, scrape_timeout: 1s}\n"
                    f"scrape_configs: [{{job_name: numaprobe, static_configs: [{{targets: ['{target}']}}]}}]\n")
        with socket_port() as port:
            self.url = f"http://127.0.0.1:{port}"
        self.log = open(os.path.join(directory, "prometheus.log"), "wb")
        self.proc = subprocess.Popen([binary, f"--config.file={config}",
                                      f"--storage.tsdb.path={os.path.join(directory, 'tsdb')}",
                                      f"--web.listen-address={self.url[len('http://'):]}"],
                                     stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def query(self, expr):
        import urllib.request
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                res = json.loads(r.read())
        except OSError:
            return None
        assert res["status"] == "success", res
        return res["data"]["result"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class socket_port:
    def __enter__(self):
        import socket
        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        return self.s.getsockname()[1]

    def __exit__(self, *exc):
        self.s.close()


def wait(predicate, timeout, what, logs=lambda: ""):
    deadline = time.time() + timeout
    while time.time() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}\n{logs()[-3000:]}")


def test_restart_on_a_new_kernel_keeps_the_baseline_and_prometheus_sees_the_regression(numaprobe_bin, run, tmp_path):
    workdir = str(tmp_path)
    state = os.path.join(workdir, "state")
    config = write_config(workdir, duty_cycle=0.5, interval="1s", baseline_rounds=3)

    # 1. The healthy host records its baseline.
    with Daemon(numaprobe_bin, config) as d:
        d.wait_for(lambda: "numaprobe_baseline_complete 1" in d.metrics().splitlines(), timeout=90,
                   what="the first baseline")
        m = parse_metrics(d.metrics())
        before = latency_baseline(m)
        real_kernel = m["numaprobe_host_info"][0][0]["kernel"]
        assert m["numaprobe_baseline_info"][0][0]["origin"] == "first_start"
        assert samples(m, "numaprobe_host_change_timestamp_seconds") == []
        assert samples(m, "numaprobe_memory_latency_baseline_spread_ratio"), "the baseline's spread is exported"
        assert all(0 <= v < 1 for _, v in m["numaprobe_memory_latency_baseline_spread_ratio"])
        assert m["numaprobe_test_fault_injection_active"][0][1] == 0
        assert d.stop()[0] == 0
    assert real_kernel != NEW_KERNEL

    # 2. A "kernel and microcode rollout" that regressed latency by 30%.
    started = time.time()
    env = {"NUMAPROBE_TEST_MODE": "1",
           "NUMAPROBE_TEST_HOST_OVERRIDES": f"kernel={NEW_KERNEL},microcode={NEW_MICROCODE}",
           "NUMAPROBE_TEST_SCALE_LATENCY": str(SCALE)}
    with Daemon(numaprobe_bin, config, env=env) as d:
        m = parse_metrics(d.metrics())
        assert m["numaprobe_baseline_info"][0][0]["origin"] == "restored"
        assert latency_baseline(m) == before, "the rollout replaced the baseline"
        changes = {c["field"]: (c, v) for c, v in m["numaprobe_host_change_timestamp_seconds"]}
        assert set(changes) == {"kernel", "microcode"}, changes
        assert changes["kernel"][0]["before"] == real_kernel and changes["kernel"][0]["after"] == NEW_KERNEL
        assert changes["microcode"][0]["after"] == NEW_MICROCODE
        assert started - 5 <= changes["kernel"][1] <= time.time() + 5
        # Both seen at this start: one newest change naming both, what
        # Alertmanager groups a rollout's drift alerts by.
        assert m["numaprobe_host_last_change_timestamp_seconds"] == [
            ({"change": f"kernel {real_kernel} -> {NEW_KERNEL}, microcode {changes['microcode'][0]['before']} -> "
                        f"{NEW_MICROCODE}"}, changes["kernel"][1])]
        assert m["numaprobe_test_fault_injection_active"][0][1] == 1
        assert m["numaprobe_refresh_interval_seconds"][0][1] >= 1
        logs = d.logs()
        assert "TEST FAULT INJECTION ACTIVE" in logs
        assert f"host kernel changed: {real_kernel} -> {NEW_KERNEL}" in logs

        with tempfile.TemporaryDirectory() as prom_dir:
            prom = Prometheus(f"127.0.0.1:{d.port}", prom_dir)
            try:
                wait(lambda: prom.query('up{job="numaprobe"} == 1'), 60, "Prometheus to scrape the daemon")
                # Every latency pair regressed since the kernel change, named by it.
                pairs = len(before)

                def drifted():
                    result = prom.query(DRIFT_SINCE_CHANGE)
                    return result if result and len(result) == pairs else None

                result = wait(drifted, 90, "the drift expression to report every pair", d.logs)
                for series in result:
                    assert series["metric"]["before"] == real_kernel
                    assert series["metric"]["after"] == NEW_KERNEL
                    assert float(series["value"][1]) > 1.06
                # The baseline is still the pre-change one in Prometheus too.
                base = prom.query("numaprobe_memory_latency_baseline_seconds")
                assert sorted(float(s["value"][1]) for s in base) == sorted(before.values())
            finally:
                prom.stop()

        # 3. The operator accepts the new level: a new baseline, no change series.
        r = run("baseline", "accept", "--state.directory", state)
        assert r.returncode == 0, r.stderr
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: parse_metrics(d.metrics())["numaprobe_baseline_info"][0][0]["origin"] == "accepted",
                   what="the accept to be taken")
        assert "numaprobe_host_change_timestamp_seconds" not in parse_metrics(d.metrics())
        assert "numaprobe_host_last_change_timestamp_seconds" not in parse_metrics(d.metrics())
        d.wait_for(lambda: "numaprobe_baseline_complete 1" in d.metrics().splitlines(), timeout=90,
                   what="the accepted baseline")
        after = latency_baseline(parse_metrics(d.metrics()))
        assert all(after[k] > before[k] * 1.06 for k in before), (before, after)
        assert d.stop()[0] == 0
