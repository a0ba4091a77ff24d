#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""hwloc XML of a big host, from a real kernel in a QEMU guest.

Boots a guest of the named shape (tests/vm/vmharness.py) and saves what
`numaprobe topology --format hwloc-xml` prints there: the topology a real
Linux kernel and hwloc see on an 8- or 16-node machine, which the sizing
preview (`HWLOC_XMLFILE=FILE numaprobe topology --config.file ...`) and the
schedule's tests (tests/daemon/big_host_schedule_test.cc) plan on.

    NUMAPROBE_VM_ACCEL=tcg,thread=multi python3 bench/guest_topology.py build/release/numaprobe 8 8 \
        tests/fixtures/topology/8node_2s_snc4.xml
    NUMAPROBE_VM_ACCEL=tcg,thread=multi python3 bench/guest_topology.py build/release/numaprobe 16 4 \
        tests/fixtures/topology/16node_4s_snc4.xml

Arguments: the binary, the node count, CPUs per node, the output file.
Shapes: SNC4-like packages of 4 nodes; distances 10 local, 12 within a
package, 21 to a neighbouring package, 31 across (16 nodes: the packages form
a ring). 64 CPUs for either: the fewest of a real host of that many nodes (two
16-core packages with SMT in SNC4), and as many as single-board TCG boots in
minutes (multi-threaded TCG: the guest only lists its topology).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vm"))
import vmharness as vh  # noqa: E402

NODES_PER_PACKAGE = 4


def topology(nodes: int, cpus_per_node: int) -> vh.VmTopology:
    packages = nodes // NODES_PER_PACKAGE

    def distance(a: int, b: int) -> int:
        pa, pb = a // NODES_PER_PACKAGE, b // NODES_PER_PACKAGE
        if pa == pb:
            return 12
        hops = min((pa - pb) % packages, (pb - pa) % packages)
        return 21 if hops == 1 else 31

    dist = {(a, b): distance(a, b) for a in range(nodes) for b in range(a + 1, nodes)}
    return vh.VmTopology(f"big{nodes}", tuple(vh.VmNode(cpus_per_node, 192) for _ in range(nodes)), dist)


def main() -> int:
    binary, nodes, cpus, out = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    scenario = vh.Scenario("xml", "run xml numaprobe topology --format hwloc-xml\n", timeout=600)
    boot = vh.boot(topology(nodes, cpus), [scenario], binary=binary, timeout=1800)
    result = boot["xml"]
    if result.rc("xml") != 0:
        print(result.text("xml.err"), file=sys.stderr)
        return 1
    out.write_text(result.text("xml.out"))
    print(f"{out}: {nodes} nodes, {nodes * cpus} CPUs, guest done in {boot.seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
