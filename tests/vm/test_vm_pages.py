# SPDX-License-Identifier: Apache-2.0
"""Page sizes read from the host, on a real kernel whose base page is not
4 KiB: the arm64 binary in an arm64 guest booted with Debian 13's arm64-16k
kernel (16 KiB base pages; transparent huge pages of 32 MiB, the PMD size;
hugetlb pages of 2 MiB (contiguous PTEs), 32 MiB and 1 GiB). Debian ships no
64 KiB arm64 kernel in any suite, so 64 KiB hosts are covered by the fixture
trees of tests/kernels/page_sizes_test.cc only.

Also the kernel's interleave weights (Linux 6.12 has them) beside the peak
matrix: the kernel vector numaprobe reports is what sysfs holds after the
guest wrote one, and each measured vector exists exactly where its figures do.

Asserted, never timed: the sizes numaprobe reports for the host match the
guest kernel's own sysfs; a buffer smaller than one THP page gets base pages
of 16 KiB (never a 4 KiB claim), one of two THP pages gets 32 MiB THP, a
hugetlb buffer gets the 2 MiB hugetlb page from node 1's pool; every buffer
verified page by page on its node (move_pages); the kernel's own view of the
probe's mapping (/proc/PID/smaps KernelPageSize) is the base page.
"""

from __future__ import annotations

import json

import pytest

import vmharness as vh
from test_vm_numa import LATENCY, PEAK, assert_measured, assert_on_node, assert_peak, ok_run, unavailable

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
BASE, THP = 16 * KiB, 32 * MiB
TOPOLOGY = vh.VmTopology("two_16k", (vh.VmNode(1, 512), vh.VmNode(1, 512)), {(0, 1): 20})
HUGEPAGES_NODE1 = "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages"
WEIGHTS = "/sys/kernel/mm/mempolicy/weighted_interleave"

SCENARIO = vh.Scenario("pages_16k", f"""
save pmd /sys/kernel/mm/transparent_hugepage/hpage_pmd_size
save thp_enabled /sys/kernel/mm/transparent_hugepage/enabled
ls /sys/kernel/mm/hugepages >"$OUT/hugetlb_dirs"
# The kernel's page for an ordinary mapping of this shell.
grep -m1 KernelPageSize /proc/self/smaps >"$OUT/shell_page"
run base numaprobe probe --format json --tests latency {LATENCY}
# Two THP pages' worth on node 1: THP (Debian's arm64-16k kernel: enabled=always).
run thp numaprobe probe --format json --tests latency --nodes 1 --latency-buffer 64MiB --samples 3 --loads 2000
echo 4 >{HUGEPAGES_NODE1}
save pool {HUGEPAGES_NODE1}
run hugetlb numaprobe probe --format json --tests latency --pages hugetlb --nodes 1 {LATENCY}
echo 0 >{HUGEPAGES_NODE1}
# Linux 6.12 has weighted interleave (the weights; `auto` came in 6.16):
# weights written by hand, then the peak matrix beside them.
ls {WEIGHTS} >"$OUT/wi_files"
echo 3 >{WEIGHTS}/node0
save wi_node0 {WEIGHTS}/node0
save wi_node1 {WEIGHTS}/node1
run peak numaprobe probe --format json --tests peak_bandwidth {PEAK}
""", timeout=300)


@pytest.fixture(scope="module")
def guest():
    try:
        return vh.boot(TOPOLOGY, [SCENARIO], kernel_variant="arm64-16k")["pages_16k"]
    except vh.HarnessUnavailable as e:
        unavailable(str(e))


def buffers(probe: dict) -> list[tuple[dict, dict]]:
    results = probe["latency"]
    assert results, "no latency result"
    return [(r, r["buffer"]) for r in results]


def test_the_host_page_sizes_are_the_kernels(guest):
    assert int(guest.text("pmd")) == THP, guest.text("pmd")
    assert guest.text("shell_page").split()[1:] == ["16", "kB"], guest.text("shell_page")
    probe = ok_run(guest, "base")
    sizes = probe["host"]["page_sizes"]
    assert sizes["base_bytes"] == BASE, sizes
    assert sizes["thp_bytes"] == THP, sizes
    dirs = {int(d.removeprefix("hugepages-").removesuffix("kB")) * KiB for d in guest.text("hugetlb_dirs").split()}
    assert {h["bytes"] for h in sizes["hugetlb"]} == dirs, (sizes, dirs)
    assert {2 * MiB, 32 * MiB} <= dirs, dirs
    # What docs/measurement.md quotes (pytest -s shows it).
    buffer = probe["latency"][0]["buffer"]
    print(json.dumps({"host": {"page_sizes": sizes},
                      "latency[0].buffer": {k: buffer[k] for k in ("bytes", "page_size", "page_bytes")}}, indent=1))


def test_a_buffer_under_one_thp_page_gets_base_pages(guest):
    # 4 MiB buffers: a 32 MiB THP page would not fit, so base pages, 16 KiB.
    probe = ok_run(guest, "base")
    assert {(r["cpu_node"], r["mem_node"]) for r, _ in buffers(probe)} == {(c, m) for c in (0, 1) for m in (0, 1)}
    for r, buffer in buffers(probe):
        assert_measured("latency", r)
        assert buffer["page_size"] == "16KiB" and buffer["page_bytes"] == BASE, buffer
        assert_on_node(buffer, r["mem_node"], f"latency {r['cpu_node']}->{r['mem_node']}")


def test_a_buffer_of_two_thp_pages_gets_32mib_thp(guest):
    assert "[always]" in guest.text("thp_enabled"), guest.text("thp_enabled")
    probe = ok_run(guest, "thp")
    for r, buffer in buffers(probe):
        assert r["mem_node"] == 1, r
        assert_measured("latency", r)
        assert buffer["page_size"] == "32MiB-thp" and buffer["page_bytes"] == THP, buffer
        assert buffer["huge_fraction"] > 0, buffer
        assert_on_node(buffer, 1, f"latency {r['cpu_node']}->1 (THP)")


def test_hugetlb_takes_the_2mib_pool_on_its_node(guest):
    assert guest.text("pool").strip() == "4", guest.describe()
    probe = ok_run(guest, "hugetlb")
    for r, buffer in buffers(probe):
        assert_measured("latency", r)
        assert buffer["page_size"] == "2MiB-hugetlb" and buffer["page_bytes"] == 2 * MiB, buffer
        assert_on_node(buffer, 1, f"latency {r['cpu_node']}->1 (hugetlb)")


def test_the_kernels_interleave_weights_beside_the_measured_ones(guest):
    """What a real kernel's weighted_interleave directory holds is the
    `kernel` vector beside every CPU node's, and the vectors made of
    measured figures exist exactly when those figures do: `measured` when the
    CPU node has read and write of both nodes, `measured_nearest` when each
    node has them from its own CPUs (both nodes have a CPU here), the ratio
    when both the kernel's and the nearest vectors exist. QEMU builds no HMAT
    here, so there is no firmware vector. Structure only: the weights made of
    figures are whatever the guest measured, within the kernel's [1, 32]."""
    files = set(guest.text("wi_files").split())
    assert {"node0", "node1"} <= files, f"no weighted interleave in the guest kernel: {files}"
    kernel = {"0": int(guest.text("wi_node0")), "1": int(guest.text("wi_node1"))}
    assert kernel == {"0": 3, "1": 1}, kernel
    records = assert_peak(guest, "peak", {n: set(TOPOLOGY.node_cpus(n)) for n in (0, 1)})
    report = guest.json("peak")
    ok = {(r["cpu_node"], r["mem_node"], r["op"]) for r in records if r["outcome"] == "ok"}
    assert ok, "no peak figure in the guest, nothing to set the weights beside:\n" + guest.describe()
    weights = {e["cpu_node"]: e for e in report["interleave_weights"]}
    assert set(weights) == {c for c, _, _ in ok}, report["interleave_weights"]

    def has_all(pairs) -> bool:
        return all((c, m, op) in ok for c, m in pairs for op in ("read", "write"))

    # What docs/measurement.md quotes (pytest -s shows it).
    print(json.dumps({"interleave_weights": report["interleave_weights"],
                      "peak": [(r["cpu_node"], r["mem_node"], r["op"], r["outcome"]) for r in records]}))
    nearest = has_all([(0, 0), (1, 1)])
    for c, e in weights.items():
        assert e["kernel"] == kernel, e
        assert e["firmware"] == {}, e
        mine = has_all([(c, 0), (c, 1)])
        assert set(e["measured"]) == ({"0", "1"} if mine else set()), e
        assert set(e["measured_nearest"]) == ({"0", "1"} if nearest else set()), e
        for w in list(e["measured"].values()) + list(e["measured_nearest"].values()):
            assert isinstance(w, int) and 1 <= w <= 32, e
        has_ratio = nearest and all((c, m, op) in ok for m in (0, 1) for op in ("read", "write"))
        assert (e["kernel_over_nearest"] is not None) == has_ratio, e
        if has_ratio:
            assert e["kernel_over_nearest"] > 0, e
