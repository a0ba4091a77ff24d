# SPDX-License-Identifier: Apache-2.0
"""The alerting path (ctest grafana_alertmanager): the example routing and
inhibition of grafana/alertmanager.yml passes `amtool check-config`, and the
mixin's alerts, as its rules make them, go through a real Alertmanager to a
webhook receiver:

- the alerts come from grafana/rules/*.yaml evaluated by promtool on a small
  fleet (a host whose topology changed while its latency drifts; three hosts
  of one CPU model after a kernel rollout, one of them with an older,
  unrelated change too, and a fourth of that model after a microcode update;
  a bandwidth drop with no change on a host of another model; a host with
  uncorrected memory errors, one whose state file is not written), labels
  and annotations exactly as Prometheus would send them;
- they are posted to Alertmanager's API as Prometheus posts them, with the
  example configuration, its receivers pointed at a webhook on loopback and
  its waits shortened (the routing tree, grouping and inhibition untouched);
- the webhook must receive: the kernel rollout's three drifting hosts of one
  model in one notification, the microcode update's host of that model in
  another (grouped by CPU model and change), each alert's description naming
  its host's changes; the bandwidth drop and the topology change each in
  their own; the memory errors alone to the pager receiver (the one critical
  alert), everything else to the ticket receiver; never the drift of the host
  whose topology changed, which Alertmanager reports as inhibited by it.

Debian's prometheus-alertmanager (0.25, with amtool) runs it; .ci/install-deps
installs it. Every wait is a poll with a deadline, never a sleep that assumes
a fast machine.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

import grafana_lib as g
from promtool_probes import parse_report

EXAMPLE = g.GRAFANA_DIR / "alertmanager.yml"
ALERTMANAGER = shutil.which("prometheus-alertmanager") or "/usr/bin/prometheus-alertmanager"
AMTOOL = shutil.which("amtool") or "/usr/bin/amtool"
DEADLINE_S = 120

AMD, INTEL = "AMD EPYC 7543", "Xeon Gold 6338"
KERNEL = ("6.1.0-18-amd64", "6.6.13-amd64")
MICROCODE = ("0xa0011d0", "0xa0011d1")
FIRMWARE = "1.4.9"
THP = ("always", "never")
# host -> (CPU model, kernel, microcode, changes since its baseline as (field,
# before, after, first seen in seconds), what goes wrong)
FLEET = {
    "host-a": (INTEL, KERNEL[1], "0xd0003a5", [("kernel", *KERNEL, 60)], {"latency": 1.3, "topology_changed": True}),
    "host-b": (AMD, KERNEL[1], MICROCODE[0], [("kernel", *KERNEL, 60)], {"latency": 1.25}),
    "host-c": (AMD, KERNEL[1], MICROCODE[0], [("kernel", *KERNEL, 70)], {"latency": 1.2}),
    "host-d": (AMD, KERNEL[0], MICROCODE[1], [("microcode", *MICROCODE, 60)], {"latency": 1.15}),
    "host-e": (INTEL, KERNEL[0], "0xd0003a5", [], {"bandwidth": 0.8}),
    "host-f": (AMD, KERNEL[1], MICROCODE[0], [("thp_enabled", *THP, 10), ("kernel", *KERNEL, 65)], {"latency": 1.2}),
    "host-g": (INTEL, KERNEL[0], "0xd0003a5", [], {"uncorrected_memory_errors": 2}),
    "host-h": (INTEL, KERNEL[0], "0xd0003a5", [], {"state_not_written": True}),
}
EVAL_MIN = 30


def require(path):
    if not os.access(path, os.X_OK):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{path} missing: .ci/install-deps installs prometheus-alertmanager")
        pytest.skip(f"{path} missing (Debian's prometheus-alertmanager)")
    return path


def test_example_passes_amtool_check_config():
    res = subprocess.run([require(AMTOOL), "check-config", str(EXAMPLE)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "SUCCESS" in res.stdout, res.stdout + res.stderr


def fleet_series() -> list[dict]:
    steps = EVAL_MIN + 10
    series = []

    def add(name, labels, values):
        body = ",".join(f'{k}="{v}"' for k, v in {"job": "numaprobe", **labels}.items())
        series.append({"series": f"{name}{{{body}}}", "values": values})

    for host, (model, kernel, microcode, changes, faults) in FLEET.items():
        instance = {"instance": f"{host}:10062"}
        add("up", instance, f"1+0x{steps}")
        add("numaprobe_host_info", {**instance, "cpu_model": model, "numa_nodes": "2", "numa_distance_sum": "62",
                                    "kernel": kernel, "microcode": microcode, "firmware": FIRMWARE,
                                    "fingerprint": host}, f"1+0x{steps}")
        for field, before, after, seen in changes:
            add("numaprobe_host_change_timestamp_seconds", {**instance, "field": field, "before": before,
                                                           "after": after}, f"{seen}+0x{steps}")
        if changes:
            # The newest change, as the daemon publishes it (one field changed
            # at that moment on every host here; tests/daemon/metrics_test.cc
            # covers several).
            field, before, after, seen = max(changes, key=lambda c: c[3])
            add("numaprobe_host_last_change_timestamp_seconds", {**instance, "change": f"{field} {before} -> {after}"},
                f"{seen}+0x{steps}")
        if "latency" in faults:
            add("numaprobe_memory_latency_worst_pair_drift_ratio", instance, f"{faults['latency']}+0x{steps}")
        if "bandwidth" in faults:
            add("numaprobe_memory_bandwidth_worst_pair_drift_ratio", {**instance, "op": "read"},
                f"{faults['bandwidth']}+0x{steps}")
        errors = faults.get("uncorrected_memory_errors", 0)
        add("numaprobe_host_memory_errors_since_baseline", {**instance, "type": "corrected"}, f"0+0x{steps}")
        add("numaprobe_host_memory_errors_since_baseline", {**instance, "type": "uncorrected"},
            f"0+0x5 {errors}+0x{steps - 6}")
        add("numaprobe_state_last_write_successful", instance,
            f"1+0x5 0+0x{steps - 6}" if faults.get("state_not_written") else f"1+0x{steps}")
        origin = "topology_changed" if faults.get("topology_changed") else "restored"
        add("numaprobe_baseline_info", {**instance, "fingerprint": host, "origin": origin}, f"1+0x{steps}")
    return series


@pytest.fixture(scope="module")
def mixin_alerts(tmp_path_factory) -> list[dict]:
    """The firing alerts of the mixin's rules on FLEET, as (labels, annotations)
    dicts: promtool prints every alert an empty exp_alerts did not expect."""
    alert_names = sorted({r["alert"] for grp in yaml.safe_load(g.ALERTING_RULES.read_text())["groups"]
                          for r in grp["rules"] if "alert" in r})
    doc = {"rule_files": [str(g.RECORDING_RULES), str(g.ALERTING_RULES)], "evaluation_interval": "1m",
           "tests": [{"interval": "1m", "input_series": fleet_series(),
                      "alert_rule_test": [{"alertname": a, "eval_time": f"{EVAL_MIN}m", "exp_alerts": []}
                                          for a in alert_names]}]}
    path = tmp_path_factory.mktemp("alerts") / "fleet_test.yaml"
    path.write_text(yaml.safe_dump(doc))
    res = subprocess.run([g.PROMTOOL, "test", "rules", str(path)], capture_output=True, text=True, timeout=300)
    _, fired, other = parse_report(res.stdout + res.stderr, set())
    assert not other, "\n".join(other)
    alerts = [{"labels": labels, "annotations": annotations}
              for name, found in fired.items() for labels, annotations in found]
    names = sorted({a["labels"]["alertname"] for a in alerts})
    assert names == ["NumaProbeBandwidthDrop", "NumaProbeLatencyDrift", "NumaProbeStateNotWritten",
                     "NumaProbeTopologyChanged", "NumaProbeUncorrectedMemoryErrors"], alerts
    return alerts


class Webhook:
    """A webhook receiver on loopback that keeps every notification."""

    def __init__(self):
        notifications = self.notifications = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                notifications.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/numaprobe"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def shortened(config: dict, webhook_url: str) -> dict:
    """The example with its receivers on the webhook and waits of a second:
    routes, grouping and inhibition as they are."""
    for receiver in config["receivers"]:
        for hook in receiver.get("webhook_configs", []):
            hook["url"] = webhook_url

    def walk(route):
        for key in ("group_wait", "group_interval"):
            if key in route:
                route[key] = "1s"
        route["repeat_interval"] = "1h"
        for child in route.get("routes", []):
            walk(child)
    walk(config["route"])
    config["route"]["group_wait"] = "1s"
    return config


def api(base, path, body=None):
    request = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as r:
        text = r.read().decode()
        return json.loads(text) if text else None


def wait_for(what, predicate, process):
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        assert process.poll() is None, f"alertmanager exited with {process.returncode}"
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def alertmanager(tmp_path):
    require(ALERTMANAGER)
    webhook = Webhook()
    config = tmp_path / "alertmanager.yml"
    config.write_text(yaml.safe_dump(shortened(yaml.safe_load(EXAMPLE.read_text()), webhook.url)))
    port = free_port()
    log = open(tmp_path / "alertmanager.log", "w")
    process = subprocess.Popen([ALERTMANAGER, f"--config.file={config}", f"--storage.path={tmp_path / 'data'}",
                                f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
                               stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def ready():
        try:
            with urllib.request.urlopen(base + "/-/ready", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False
    try:
        wait_for("alertmanager to be ready", ready, process)
        yield base, webhook, process
    finally:
        process.terminate()
        process.wait(timeout=30)
        webhook.close()
        log.close()


def post(base, alerts):
    """As Prometheus sends firing alerts: labels, annotations, times, source."""
    now = datetime.now(timezone.utc)
    api(base, "/api/v2/alerts", [{"labels": a["labels"], "annotations": a["annotations"],
                                  "startsAt": now.isoformat(), "endsAt": (now + timedelta(hours=1)).isoformat(),
                                  "generatorURL": "http://prometheus.example.com/graph"} for a in alerts])


def host(alert):
    return alert["labels"]["instance"].split(":")[0]


def test_mixin_alerts_through_a_real_alertmanager(mixin_alerts, alertmanager):
    base, webhook, process = alertmanager
    # The topology change first, as it would be (its `for` is as long as the
    # drift's): the inhibition needs its source present.
    source = [a for a in mixin_alerts if a["labels"]["alertname"] == "NumaProbeTopologyChanged"]
    assert [host(a) for a in source] == ["host-a"]
    post(base, source)
    wait_for("the topology change in Alertmanager", lambda: api(base, "/api/v2/alerts"), process)
    post(base, [a for a in mixin_alerts if a not in source])

    def groups():
        """{group labels: hosts} of every notification so far."""
        out = {}
        for n in webhook.notifications:
            # Critical alerts page, the others are tickets.
            critical = {a["labels"]["severity"] == "critical" for a in n["alerts"]}
            assert critical in ({True}, {False}), n
            assert n["receiver"] == ("numa-pager" if critical == {True} else "numa-tickets"), n
            assert n["status"] == "firing", n
            key = tuple(sorted(n["groupLabels"].items()))
            out.setdefault(key, set()).update(host(a) for a in n["alerts"])
        return out

    kernel_rollout = f"kernel {KERNEL[0]} -> {KERNEL[1]}"
    want = {
        (("alertname", "NumaProbeLatencyDrift"), ("change", kernel_rollout), ("cpu_model", AMD)):
            {"host-b", "host-c", "host-f"},
        (("alertname", "NumaProbeLatencyDrift"), ("change", f"microcode {MICROCODE[0]} -> {MICROCODE[1]}"),
         ("cpu_model", AMD)): {"host-d"},
        (("alertname", "NumaProbeBandwidthDrop"), ("cpu_model", INTEL)): {"host-e"},
        (("alertname", "NumaProbeTopologyChanged"), ("instance", "host-a:10062"), ("job", "numaprobe")): {"host-a"},
        (("alertname", "NumaProbeUncorrectedMemoryErrors"), ("instance", "host-g:10062"), ("job", "numaprobe")):
            {"host-g"},
        (("alertname", "NumaProbeStateNotWritten"), ("instance", "host-h:10062"), ("job", "numaprobe")): {"host-h"},
    }
    # Every alert that may pass has arrived (then what was grouped with what).
    expected = sum(len(hosts) for hosts in want.values())
    got = wait_for(f"{expected} alerts at the webhook",
                   lambda: groups() if sum(len(h) for h in groups().values()) >= expected else None, process)
    assert got == want, got
    # The model's kernel rollout is one notification for its three hosts, not
    # three; host-f's older THP change does not split it off.
    rollout = [n for n in webhook.notifications if n["groupLabels"].get("change") == kernel_rollout]
    assert len(rollout) == 1, rollout
    assert sorted(host(a) for a in rollout[0]["alerts"]) == ["host-b", "host-c", "host-f"], rollout
    sent = {(a["labels"]["alertname"], host(a)): a for n in webhook.notifications for a in n["alerts"]}
    # What a receiver shows is the mixin's text, naming each host's change.
    assert f"since kernel {KERNEL[0]} -> {KERNEL[1]}" in sent[("NumaProbeLatencyDrift", "host-b")]["annotations"][
        "description"]
    assert f"since microcode {MICROCODE[0]} -> {MICROCODE[1]}" in sent[("NumaProbeLatencyDrift", "host-d")][
        "annotations"]["description"]
    assert f"since kernel {KERNEL[0]} -> {KERNEL[1]}, thp_enabled {THP[0]} -> {THP[1]}" in sent[
        ("NumaProbeLatencyDrift", "host-f")]["annotations"]["description"]
    assert "change" not in sent[("NumaProbeBandwidthDrop", "host-e")]["labels"], "no change, no label"
    pages = [n for n in webhook.notifications if n["receiver"] == "numa-pager"]
    assert [(a["labels"]["alertname"], host(a)) for n in pages for a in n["alerts"]] == [
        ("NumaProbeUncorrectedMemoryErrors", "host-g")], pages
    assert sent[("NumaProbeLatencyDrift", "host-b")]["annotations"]["runbook_url"].endswith("#numaprobelatencydrift")
    # host-a's drift never reached the webhook: Alertmanager holds it,
    # inhibited by the same host's topology change.
    assert ("NumaProbeLatencyDrift", "host-a") not in sent
    held = api(base, "/api/v2/alerts?inhibited=true&active=false&silenced=false")
    drift_a = [a for a in held if a["labels"]["alertname"] == "NumaProbeLatencyDrift" and host(a) == "host-a"]
    assert len(drift_a) == 1, held
    assert drift_a[0]["status"]["state"] == "suppressed" and drift_a[0]["status"]["inhibitedBy"], drift_a
