#!/usr/bin/env python3
"""hwloc XML of a big host, from a real kernel in a QEMU guest.

Boots a guest of the named shape (tests/vm/vmharness.py) and saves what
`numaprobe topology --format hwloc-xml` prints there: the topology a real
Linux kernel and hwloc see on an 8- or 16-node machine, which the sizing
preview (`HWLOC_XMLFILE=FILE numaprobe topology --config.file ...`) and the
schedule's tests (tests/daemon/big_host_schedule_test.cc) plan on.

    python3 bench/guest_topology.py build/release/numaprobe 8 tests/fixtures/topology/8node_2s_snc4.xml
    python3 bench/guest_topology.py build/release/numaprobe 16 tests/fixtures/topology/16node_4s_snc4.xml

Shapes: SNC4-like packages of 4 nodes, 4 CPUs per node; distances 10 local,
12 within a package, 21 to a neighbouring package, 31 across (16 nodes: the
packages form a ring).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vm"))
import vmharness as vh  # noqa: E402

CPUS_PER_NODE = 4
NODES_PER_PACKAGE = 4


def topology(nodes: int) -> vh.VmTopology:
    packages = nodes // NODES_PER_PACKAGE

    def distance(a: int, b: int) -> int:
        pa, pb = a // NODES_PER_PACKAGE, b // NODES_PER_PACKAGE
        if pa == pb:
            return 12
        hops = min((pa - pb) % packages, (pb - pa) % packages)
        return 21 if hops == 1 else 31

    dist = {(a, b): distance(a, b) for a in range(nodes) for b in range(a + 1, nodes)}
    return vh.VmTopology(f"big{nodes}", tuple(vh.VmNode(CPUS_PER_NODE, 192) for _ in range(nodes)), dist)


def main() -> int:
    binary, nodes, out = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    scenario = vh.Scenario("xml", "run xml numaprobe topology --format hwloc-xml\n", timeout=600)
    result = vh.boot(topology(nodes), [scenario], binary=binary, timeout=1800)["xml"]
    if result.rc("xml") != 0:
        print(result.text("xml.err"), file=sys.stderr)
        return 1
    out.write_text(result.text("xml.out"))
    print(f"{out}: {nodes} nodes, {nodes * CPUS_PER_NODE} CPUs, guest up in {result.describe()[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
