// SPDX-License-Identifier: Apache-2.0
// Unit tests for ProbeCpusByNode (daemon/serve/host_watch.h): which CPUs'
// governor and frequency the host watch reads, from the targets of a round.
#include "daemon/serve/host_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace numaprobe::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// Two nodes of four CPUs: node 0 has CPUs 0-3, node 1 CPUs 4-7.
kernels::Topology FourCpusOnTwoNodes() {
  auto topology = kernels::Topology::FromSynthetic("pack:2 [numa(memory=1GiB)] core:4 pu:1", {});
  EXPECT_TRUE(topology.ok()) << topology.failure().reason;
  return std::move(topology).value();
}

TEST(ProbeCpusByNode, AnyCpuOfTheNodeMeansEveryCpuOfIt) {
  const kernels::Topology topology = FourCpusOnTwoNodes();
  MemoryPair any_of_node0{3, 0, 1, true};
  EXPECT_THAT(ProbeCpusByNode({MemoryTarget(any_of_node0)}, topology), ElementsAre(Pair(0, ElementsAre(0, 1, 2, 3))));
}

TEST(ProbeCpusByNode, ANamedCpuIsThatCpuAlone) {
  const kernels::Topology topology = FourCpusOnTwoNodes();
  EXPECT_THAT(ProbeCpusByNode({MemoryTarget({5, 1, 0, false}), MemoryTarget({5, 1, 1, false}, "read")}, topology),
              ElementsAre(Pair(1, ElementsAre(5))));
}

TEST(ProbeCpusByNode, APeerCpuCountsOnItsOwnNode) {
  const kernels::Topology topology = FourCpusOnTwoNodes();
  ProbeTarget between_nodes = MemoryTarget({3, 0, 0, false});
  between_nodes.peer_cpu = 7;
  between_nodes.relation = kernels::CpuRelation::kCrossNode;
  EXPECT_THAT(ProbeCpusByNode({between_nodes}, topology),
              ElementsAre(Pair(0, ElementsAre(3)), Pair(1, ElementsAre(7))));
}

TEST(ProbeCpusByNode, NoTargetsNoCpus) { EXPECT_TRUE(ProbeCpusByNode({}, FourCpusOnTwoNodes()).empty()); }

}  // namespace
}  // namespace numaprobe::daemon
