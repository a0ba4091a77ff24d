# SPDX-License-Identifier: Apache-2.0
"""The interleave_bandwidth kind on a host with one memory node (this
machine): `numaprobe probe --tests interleave_bandwidth` says that a one-node
host has nothing to interleave and publishes no figure, in the table and in
JSON; the daemon with the kind enabled says so once in its log, plans no run
and exports no figure. The page split on several nodes is the QEMU guest's to
prove (tests/vm), from the JSON's `page_shares` and `weights`."""
import glob
import json
import re

import pytest

from daemon import Daemon

REASON = "interleave_bandwidth not planned: 1 memory node: a one-node host has nothing to interleave"


def memory_nodes():
    """Nodes with memory, from sysfs."""
    nodes = []
    for path in glob.glob("/sys/devices/system/node/node[0-9]*/meminfo"):
        m = re.search(r"MemTotal:\s+(\d+)", open(path).read())
        if m and int(m.group(1)) > 0:
            nodes.append(path)
    return nodes


pytestmark = pytest.mark.skipif(len(memory_nodes()) != 1,
                                reason="the one-node outcome; several nodes are the QEMU guest's")


def test_the_table_says_there_is_nothing_to_interleave(run):
    r = run("probe", "--tests", "interleave_bandwidth", "--lock-file", "")
    assert r.returncode == 0, r.stderr
    assert "interleaved memory bandwidth: nothing to measure on this host" in r.stdout, r.stdout
    assert f"note: {REASON}" in r.stdout, r.stdout
    assert "Interleaved read bandwidth" not in r.stdout, "no figure on a one-node host"


def test_the_json_has_no_record_and_says_why(run):
    r = run("probe", "--tests", "interleave_bandwidth", "--format", "json", "--lock-file", "")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out.get("interleave_bandwidth", []) == [], out.get("interleave_bandwidth")
    assert REASON in out["topology"]["plan"]["notes"], out["topology"]["plan"]["notes"]


CONFIG = """\
probes:
  latency: {{enabled: true, stride_bytes: 128, buffer_size: 16MiB, samples: 3, loads_per_sample: 5000}}
  bandwidth: {{enabled: false}}
  core_to_core: {{enabled: false}}
  interleave_bandwidth: {{enabled: true}}
schedule: {{interval: 1s, jitter: 0.1, duty_cycle: 0.5}}
memory: {{budget: 512MiB}}
baseline: {{rounds: 1}}
state_directory: {state}
probe_lock_file: {lock}
"""


def test_the_daemon_says_so_once_and_exports_no_figure(numaprobe_bin, tmp_path):
    config = tmp_path / "numaprobe.yaml"
    config.write_text(CONFIG.format(state=tmp_path / "state", lock=tmp_path / "probe.lock"))
    with Daemon(numaprobe_bin, str(config)) as d:
        d.wait_for(lambda: re.search(r"^numaprobe_rounds_completed_total [2-9]", d.metrics(), re.M),
                   what="two rounds")
        body = d.metrics()
        logs = d.logs()
    assert logs.count(REASON) == 1, logs
    assert not re.search(r"^numaprobe_memory_interleave_\w+\{", body, re.M), "no figure on a one-node host"
    runs = re.findall(r'^numaprobe_probe_runs_total\{probe="interleave_bandwidth",result="\w+"\} (\S+)$', body, re.M)
    assert runs and all(float(v) == 0 for v in runs), runs
