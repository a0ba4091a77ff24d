// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/topology.cc and kernels/topology_hwloc.cc, on the hwloc
// XML fixtures described in tests/fixtures/topology/README.md.
#include "kernels/topology.h"

#include <sched.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace numaprobe::kernels {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::StartsWith;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::size_t kL3Bytes = std::size_t{32} << 20;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(NUMAPROBE_FIXTURES) / "topology" / name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Topology Load(const std::string& name, const Restriction& restriction = {}) {
  auto topology = Topology::FromXml(ReadFixture(name), restriction);
  EXPECT_TRUE(topology.ok()) << (topology.ok() ? "" : topology.failure().reason);
  return topology.ok() ? std::move(topology).value() : Topology{};
}

std::vector<int> Range(int first, int last) {
  std::vector<int> ids;
  for (int id = first; id <= last; ++id) ids.push_back(id);
  return ids;
}

TEST(TopologyTest, TwoSocketNodesIncludeTheCpuLessCxlNode) {
  const Topology topology = Load("2s_nps2_cxl.xml");
  ASSERT_EQ(topology.nodes().size(), 5u);
  for (int id = 0; id < 4; ++id) {
    const NodeInfo* node = topology.FindNode(id);
    ASSERT_NE(node, nullptr);
    EXPECT_EQ(node->cpus, Range(8 * id, 8 * id + 7)) << "node " << id;
    EXPECT_EQ(node->memory_bytes, 16 * kGiB);
  }
  // hwloc gives node 4 the cpuset of package 0; it must still be CPU-less.
  const NodeInfo* cxl = topology.FindNode(4);
  ASSERT_NE(cxl, nullptr);
  EXPECT_THAT(cxl->cpus, IsEmpty());
  EXPECT_EQ(cxl->memory_bytes, 64 * kGiB);
  EXPECT_TRUE(cxl->has_memory());
  EXPECT_EQ(cxl->subtype, "CXL-DRAM");
  EXPECT_EQ(topology.FindNode(5), nullptr);
  EXPECT_THAT(topology.disallowed_nodes(), IsEmpty());
  EXPECT_EQ(topology.cpu_model, "Test EPYC 2S NPS2");
}

TEST(TopologyTest, TwoSocketCpusAndLlcs) {
  const Topology topology = Load("2s_nps2_cxl.xml");
  ASSERT_EQ(topology.cpus().size(), 32u);
  EXPECT_THAT(topology.disallowed_cpus(), IsEmpty());
  const CpuInfo* cpu = topology.FindCpu(21);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->core, 10);
  EXPECT_EQ(cpu->package, 1);
  EXPECT_EQ(cpu->node, 2);
  EXPECT_EQ(cpu->llc, 5);
  EXPECT_EQ(topology.FindCpu(32), nullptr);

  ASSERT_EQ(topology.llcs().size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    const LlcInfo& llc = topology.llcs()[i];
    EXPECT_EQ(llc.index, static_cast<int>(i));
    EXPECT_EQ(llc.bytes, kL3Bytes);
    EXPECT_EQ(llc.cpus, Range(static_cast<int>(4 * i), static_cast<int>(4 * i + 3)));
  }
  EXPECT_EQ(topology.LlcBytesOf(13), kL3Bytes);
  EXPECT_EQ(topology.LlcBytesOf(99), 0u);
}

TEST(TopologyTest, RelationFollowsCoreLlcAndNode) {
  const Topology topology = Load("2s_nps2_cxl.xml");
  EXPECT_EQ(topology.Relation(0, 1), CpuRelation::kSmt);
  EXPECT_EQ(topology.Relation(0, 3), CpuRelation::kSameLlc);
  EXPECT_EQ(topology.Relation(0, 5), CpuRelation::kSameNode);
  EXPECT_EQ(topology.Relation(0, 8), CpuRelation::kCrossNode);   // same package, other node
  EXPECT_EQ(topology.Relation(0, 31), CpuRelation::kCrossNode);  // other package
  EXPECT_EQ(topology.Relation(0, 99), CpuRelation::kCrossNode);  // unknown CPU
}

TEST(TopologyTest, RelationNamesAreTheMetricContract) {
  EXPECT_EQ(CpuRelationName(CpuRelation::kSmt), "smt");
  EXPECT_EQ(CpuRelationName(CpuRelation::kSameLlc), "same_llc");
  EXPECT_EQ(CpuRelationName(CpuRelation::kSameNode), "same_node");
  EXPECT_EQ(CpuRelationName(CpuRelation::kCrossNode), "cross_node");
}

TEST(TopologyTest, DistancesComeFromTheFirmwareMatrix) {
  const Topology topology = Load("2s_nps2_cxl.xml");
  ASSERT_TRUE(topology.has_distances());
  EXPECT_EQ(topology.Distance(0, 0), 10);
  EXPECT_EQ(topology.Distance(0, 1), 12);
  EXPECT_EQ(topology.Distance(1, 3), 32);
  EXPECT_EQ(topology.Distance(1, 4), 20);
  EXPECT_EQ(topology.Distance(4, 2), 40);
  EXPECT_EQ(topology.Distance(4, 4), 10);
  EXPECT_EQ(topology.Distance(0, 9), 0);
}

TEST(TopologyTest, RestrictionLimitsCpusAndNodes) {
  Restriction restriction;
  restriction.cpus = std::set<int>{0, 1, 2, 3, 4, 5, 6, 7, 40};  // 40 does not exist: ignored
  restriction.mem_nodes = std::set<int>{0};
  const Topology topology = Load("2s_nps2_cxl.xml", restriction);
  ASSERT_EQ(topology.cpus().size(), 8u);
  EXPECT_EQ(topology.cpus().back().id, 7);
  ASSERT_EQ(topology.nodes().size(), 1u);
  EXPECT_EQ(topology.nodes()[0].cpus, Range(0, 7));
  EXPECT_EQ(topology.disallowed_cpus(), Range(8, 31));
  EXPECT_THAT(topology.disallowed_nodes(), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(topology.llcs().size(), 2u);
  // Distances still cover every node, for reporting.
  EXPECT_EQ(topology.Distance(0, 2), 32);
}

TEST(TopologyTest, HwlocAllowedSetsOfflineCpusAndMemorylessNodes) {
  const Topology topology = Load("3node_memoryless_cgroup.xml");
  ASSERT_EQ(topology.cpus().size(), 5u);
  EXPECT_EQ(topology.cpus().back().id, 4);
  EXPECT_THAT(topology.disallowed_cpus(), ElementsAre(5, 6));  // outside the cgroup; offline
  ASSERT_EQ(topology.nodes().size(), 2u);
  EXPECT_TRUE(topology.nodes()[0].has_memory());
  EXPECT_FALSE(topology.nodes()[1].has_memory());
  EXPECT_THAT(topology.nodes()[1].cpus, ElementsAre(2, 3));
  EXPECT_THAT(topology.disallowed_nodes(), ElementsAre(2));
  // CPU 4 is usable although its node's memory is not.
  EXPECT_EQ(topology.FindCpu(4)->node, 2);
  EXPECT_FALSE(topology.has_distances());
  EXPECT_EQ(topology.cpu_model, "unknown");
  EXPECT_EQ(topology.LlcBytesOf(0), 0u);  // no caches described
}

TEST(TopologyTest, SyntheticDescription) {
  auto topology = Topology::FromSynthetic("pack:2 [numa(memory=1GiB)] l3:2 core:2 pu:2", {});
  ASSERT_TRUE(topology.ok()) << topology.failure().reason;
  EXPECT_EQ(topology->cpus().size(), 16u);
  ASSERT_EQ(topology->nodes().size(), 2u);
  EXPECT_EQ(topology->nodes()[1].cpus, Range(8, 15));
  EXPECT_EQ(topology->nodes()[1].memory_bytes, kGiB);
  EXPECT_EQ(topology->llcs().size(), 4u);
  EXPECT_EQ(topology->Relation(8, 9), CpuRelation::kSmt);
  EXPECT_EQ(topology->Relation(8, 12), CpuRelation::kSameNode);
}

TEST(TopologyTest, BadDescriptionsFailInsteadOfCrashing) {
  for (const char* xml : {"", "not xml", "<topology version=\"2.0\"><object type=\"Machine\"", "<?xml?><foo/>"}) {
    auto topology = Topology::FromXml(xml, {});
    ASSERT_FALSE(topology.ok()) << xml;
    EXPECT_EQ(topology.failure().outcome, Outcome::kInvalidSpec);
    EXPECT_THAT(topology.failure().reason, StartsWith("hwloc: "));
  }
  auto synthetic = Topology::FromSynthetic("pack:2 bogus:3", {});
  ASSERT_FALSE(synthetic.ok());
  EXPECT_THAT(synthetic.failure().reason, StartsWith("hwloc: "));
}

TEST(TopologyTest, HostTopologyLoads) {
  auto topology = Topology::FromHost();
  ASSERT_TRUE(topology.ok()) << topology.failure().reason;
  EXPECT_GE(topology->cpus().size(), 1u);
  ASSERT_FALSE(topology->nodes().empty());
  EXPECT_TRUE(topology->nodes().front().has_memory());
  EXPECT_FALSE(topology->cpu_model.empty());
  // Linux always has node distances, even where hwloc drops a 1x1 matrix.
  ASSERT_TRUE(topology->has_distances());
  const int node = topology->nodes().front().id;
  EXPECT_EQ(topology->Distance(node, node), 10);
  for (const CpuInfo& cpu : topology->cpus()) EXPECT_GE(cpu.node, 0) << "cpu " << cpu.id;
}

std::vector<int> CpuIds(const Topology& topology) {
  std::vector<int> ids;
  for (const CpuInfo& cpu : topology.cpus()) ids.push_back(cpu.id);
  return ids;
}
std::vector<int> NodeIds(const Topology& topology) {
  std::vector<int> ids;
  for (const NodeInfo& node : topology.nodes()) ids.push_back(node.id);
  return ids;
}

// HWLOC_SYNTHETIC or HWLOC_XMLFILE in this process's environment: FromHost
// loads the description, FromThisMachine still this machine (the CPUs this
// process may run on, the nodes sysfs lists), and the environment is left as
// it was.
TEST(TopologyTest, ThisMachineIgnoresTheVariablesThatDescribeAnother) {
  ASSERT_EQ(std::getenv("HWLOC_SYNTHETIC"), nullptr);
  ASSERT_EQ(std::getenv("HWLOC_XMLFILE"), nullptr);
  auto real = Topology::FromHost();
  ASSERT_TRUE(real.ok()) << real.failure().reason;
  ASSERT_TRUE(real->described_by.empty());
  cpu_set_t affinity;
  ASSERT_EQ(sched_getaffinity(0, sizeof affinity, &affinity), 0);
  EXPECT_EQ(real->cpus().size(), static_cast<std::size_t>(CPU_COUNT(&affinity)));
  std::size_t sysfs_nodes = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/node")) {
    const std::string name = entry.path().filename().string();
    sysfs_nodes += name.size() > 4 && name.starts_with("node") && std::isdigit(static_cast<unsigned char>(name[4]));
  }
  EXPECT_EQ(real->nodes().size() + real->disallowed_nodes().size(), sysfs_nodes);

  // Neither description has this machine's shape: more nodes than it has (16 in the XML).
  const std::size_t described_nodes = sysfs_nodes + 2;
  const std::string synthetic = "pack:" + std::to_string(described_nodes) + " [numa(memory=1GiB)] core:1 pu:1";
  const std::string xml = (std::filesystem::path(NUMAPROBE_FIXTURES) / "topology" / "16node_4s_snc4.xml").string();
  for (const auto& [variable, value] :
       {std::pair<std::string, std::string>{"HWLOC_SYNTHETIC", synthetic}, {"HWLOC_XMLFILE", xml}}) {
    SCOPED_TRACE(variable);
    ASSERT_EQ(setenv(variable.c_str(), value.c_str(), 1), 0);
    auto described = Topology::FromHost();
    auto here = Topology::FromThisMachine();
    const char* after = std::getenv(variable.c_str());
    const std::string left = after != nullptr ? after : "(unset)";
    unsetenv(variable.c_str());

    EXPECT_EQ(left, value) << "the environment is left as it was";
    ASSERT_TRUE(described.ok()) << described.failure().reason;
    EXPECT_EQ(described->described_by, variable + "=" + value);
    EXPECT_EQ(described->nodes().size(), variable == "HWLOC_SYNTHETIC" ? described_nodes : 16u);
    ASSERT_TRUE(here.ok()) << here.failure().reason;
    EXPECT_TRUE(here->described_by.empty()) << here->described_by;
    EXPECT_EQ(CpuIds(here.value()), CpuIds(real.value()));
    EXPECT_EQ(NodeIds(here.value()), NodeIds(real.value()));
    EXPECT_EQ(here->disallowed_nodes(), real->disallowed_nodes());
    EXPECT_EQ(here->cpu_model, real->cpu_model);
    ASSERT_TRUE(here->has_distances());
    const int node = here->nodes().front().id;
    EXPECT_EQ(here->Distance(node, node), real->Distance(node, node));
  }
}

TEST(TopologyTest, ProcessRestrictionIncludesTheCurrentCpu) {
  const Restriction restriction = Restriction::FromProcess();
  ASSERT_TRUE(restriction.cpus.has_value());
  EXPECT_TRUE(restriction.cpus->contains(sched_getcpu()));
  ASSERT_TRUE(restriction.mem_nodes.has_value());
  EXPECT_FALSE(restriction.mem_nodes->empty());
}

}  // namespace
}  // namespace numaprobe::kernels
