# SPDX-License-Identifier: Apache-2.0
"""Host facts read every round and on SIGHUP: the real daemon reads them from a
fixture tree (--path.procfs and --path.sysfs, as in a container that mounts the
host's /proc and /sys elsewhere) which the test edits while it runs, as an operator's `echo never > .../enabled`
would edit /sys. Each edit must come back as a host change event on /metrics
within a round or at once on SIGHUP, without a restart, and survive a restart.
The firmware's advertised figures (ACPI HMAT) of the fixture are exported exactly.
"""
import os
import shutil
import signal
import time

import pytest

from daemon import SANITIZED_SLOWDOWN, Daemon, has_sample, parse_metrics

FIXTURES = os.path.join(os.environ.get("NUMAPROBE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
                        "tests", "fixtures", "host_facts")

# Latency only, small: the test is about host facts, not figures. nice19, not
# SCHED_IDLE: on a saturated machine an idle probe may not finish a round at all.
CONFIG = """\
probes:
  latency: {{enabled: true, stride_bytes: 128, buffer_size: 16MiB, samples: 3, loads_per_sample: 5000}}
  bandwidth: {{enabled: false}}
  core_to_core: {{enabled: false}}
schedule: {{duty_cycle: 0.2, interval: {interval}, jitter: 0, priority: nice19}}
baseline: {{rounds: 1}}
state_directory: {state}
probe_lock_file: {lock}
"""


def fact_tree(tmp_path):
    """The `before` states of several facts and the HMAT, merged into one root."""
    root = tmp_path / "host"
    for fact in ("thp", "numa_balancing", "node_memory", "cmdline"):
        shutil.copytree(os.path.join(FIXTURES, fact, "before"), root, dirs_exist_ok=True)
    shutil.copytree(os.path.join(FIXTURES, "hmat"), root, dirs_exist_ok=True)
    return root


def start(tmp_path, root, interval):
    config = tmp_path / "numaprobe.yaml"
    config.write_text(CONFIG.format(interval=interval, state=tmp_path / "state", lock=tmp_path / "probe.lock"))
    return Daemon(os.environ["NUMAPROBE_BIN"], str(config),
                  extra_args=["--path.procfs", str(root / "proc"), "--path.sysfs", str(root / "sys")])


def changes(d):
    return {(l["field"], l["before"], l["after"]): v
            for l, v in parse_metrics(d.metrics()).get("numaprobe_host_change_timestamp_seconds", [])}


def rounds_completed(d):
    return parse_metrics(d.metrics())["numaprobe_rounds_completed_total"][0][1]


def wait_baseline(d):
    d.wait_ready()
    d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_baseline_complete 1"), what="a complete baseline")


def test_runtime_changes_are_seen_within_a_round_and_persist(tmp_path):
    root = fact_tree(tmp_path)
    with start(tmp_path, root, "1s") as d:
        wait_baseline(d)
        assert f"host facts read from {root}/proc and {root}/sys" in d.logs(), d.logs()[-3000:]
        assert "TEST MODE" not in d.logs(), "fact trees are a flag, not a test hook"
        m = d.metrics()
        assert has_sample(m, 'numaprobe_host_fact_info{field="thp_enabled",value="madvise"} 1'), m
        assert has_sample(m, 'numaprobe_host_fact_info{field="numa_balancing",value="0"} 1')
        assert has_sample(m, 'numaprobe_node_hugepages{node="1",page_size="2048kB"} 0')
        assert has_sample(m, 'numaprobe_node_memory_total_bytes{node="1"} 8589934592')
        assert changes(d) == {}

        (root / "sys/kernel/mm/transparent_hugepage/enabled").write_text("always madvise [never]\n")
        (root / "proc/sys/kernel/numa_balancing").write_text("1\n")
        (root / "sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages").write_text("512\n")
        edited = time.time()
        want = {("thp_enabled", "madvise", "never"), ("numa_balancing", "0", "1"),
                ("node1.hugepages_2048kB", "0", "512")}
        # Within a round: the round under way, then the next, which reads the
        # facts before its first probe. Waited for by the daemon's rounds, not
        # seconds: once two rounds have ended since the edit, the events must
        # be there however long those rounds took.
        since = rounds_completed(d)
        d.wait_for(lambda: want <= set(changes(d)) or rounds_completed(d) >= since + 2, timeout=120,
                   what=f"change events {want} or two rounds")
        seen = changes(d)
        assert want <= set(seen), f"two rounds after the edit, change events {set(seen)}, not {want}"
        for key in want:
            assert edited - 1 <= seen[key] <= time.time(), (key, seen[key], edited)
        m = d.metrics()
        assert has_sample(m, 'numaprobe_host_fact_info{field="thp_enabled",value="never"} 1'), m
        assert has_sample(m, 'numaprobe_node_hugepages{node="1",page_size="2048kB"} 512')
        assert has_sample(m, "numaprobe_baseline_complete 1"), "a host change keeps the baseline"
        assert "host thp_enabled changed: madvise -> never" in d.logs()
        # Facts this tree lacks are unknown, logged once however many rounds ran.
        assert has_sample(m, 'numaprobe_host_fact_info{field="edac_memory",value="no_edac"} 1')
        assert d.logs().count("host fact hardware_corrupted_bytes cannot be read") == 1, d.logs()[-3000:]
        code, _ = d.stop()
        assert code == 0

    # Persisted: a restart on the changed host shows the same events with the
    # times they were first seen, and adds none.
    with start(tmp_path, root, "1s") as d:
        wait_baseline(d)
        again = changes(d)
        assert {k: seen[k] for k in want} == {k: again[k] for k in want}
        assert "origin=\"restored\"" in d.metrics()


def test_sighup_rereads_the_facts_between_rounds(tmp_path):
    root = fact_tree(tmp_path)
    # One round, then none for an hour: only SIGHUP can make the daemon look.
    # (The baseline being recorded keeps the change as a complete one would.)
    with start(tmp_path, root, "1h") as d:
        d.wait_ready()
        (root / "proc/cmdline").write_text(
            (root / "proc/cmdline").read_text().strip() + " mitigations=off\n")
        time.sleep(1)
        assert changes(d) == {}, "no round ran, no SIGHUP yet"
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: ("cmdline.mitigations", "unset", "off") in changes(d), timeout=10 * SANITIZED_SLOWDOWN,
                   what="the command line change after SIGHUP")


def test_hmat_figures_are_exported_exactly(tmp_path):
    root = fact_tree(tmp_path)
    with start(tmp_path, root, "1s") as d:
        wait_baseline(d)
        m = parse_metrics(d.metrics())
        latency = {(l["mem_node"], l["initiator_class"], l["op"]): v for l, v in m["numaprobe_hmat_latency_seconds"]}
        bandwidth = {(l["mem_node"], l["initiator_class"], l["op"]): v
                     for l, v in m["numaprobe_hmat_bandwidth_bytes_per_second"]}
        assert latency[("2", "any", "read")] == pytest.approx(95e-9, rel=1e-12)
        assert latency[("2", "any", "write")] == pytest.approx(120e-9, rel=1e-12)
        assert bandwidth[("2", "any", "read")] == 8192 * 2**20
        assert bandwidth[("0", "cpu", "write")] == 20480 * 2**20
        assert ("2", "cpu", "read") not in latency, "node 2's access1 holds no figures"
        initiators = {(l["mem_node"], l["initiator_class"]): l["initiator_nodes"]
                      for l, _ in m["numaprobe_hmat_initiators_info"]}
        assert initiators[("2", "any")] == "0-1"
        # This host measures node 0 from node 0: the ratio is measured over the
        # CPU class's advertised 10 ns, whatever the machine's real latency is.
        ratios = {(l["cpu_node"], l["mem_node"]): v for l, v in m["numaprobe_memory_latency_hmat_ratio"]}
        measured = {(l["cpu_node"], l["mem_node"]): v for l, v in m["numaprobe_memory_latency_seconds"]}
        assert ratios[("0", "0")] == pytest.approx(measured[("0", "0")] / 10e-9, rel=1e-9)
        status, _, page = d.get("/")
        assert status == 200 and "Advertised by the firmware (ACPI HMAT" in page and "Host facts" in page
