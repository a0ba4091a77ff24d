// SPDX-License-Identifier: Apache-2.0
// Unit tests for the host facts read from sysfs and procfs
// (daemon/common/runtime_facts.h, host_info.h, kernel_cmdline.h) on the
// fixture trees of tests/fixtures/host_facts: each fact's before and after
// state, and a host where none of the files exist.
#include "daemon/common/runtime_facts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "daemon/common/host_info.h"
#include "daemon/common/kernel_cmdline.h"
#include "daemon/common/weighted_interleave.h"

namespace numaprobe::daemon {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

std::string Tree(const std::string& fact, const std::string& state) {
  return (std::filesystem::path(NUMAPROBE_FIXTURES) / "host_facts" / fact / state).string();
}

FactRoots Roots(const std::string& fact, const std::string& state) {
  return {Tree(fact, state) + "/proc", Tree(fact, state) + "/sys"};
}

// Nodes 0 and 1 probe from CPUs 0-1 and 2-3.
const std::map<int, std::vector<int>> kProbeCpus = {{0, {0, 1}}, {1, {2, 3}}};

RuntimeFacts Read(const std::string& fact, const std::string& state) {
  return ReadRuntimeFacts(Roots(fact, state), kProbeCpus);
}

// field -> (before, after) for every field whose value differs.
std::map<std::string, std::pair<std::string, std::string>> Changed(const std::string& fact) {
  const RuntimeFacts before = Read(fact, "before");
  const RuntimeFacts after = Read(fact, "after");
  std::map<std::string, std::pair<std::string, std::string>> changed;
  for (const auto& [field, value] : after.fields) {
    const auto it = before.fields.find(field);
    const std::string old = it == before.fields.end() ? "(absent)" : it->second;
    if (old != value) changed[field] = {old, value};
  }
  for (const auto& [field, value] : before.fields) {
    if (!after.fields.contains(field)) changed[field] = {value, "(absent)"};
  }
  return changed;
}

TEST(HostFactsTest, TransparentHugePages) {
  EXPECT_THAT(Changed("thp"), UnorderedElementsAre(Pair("thp_enabled", Pair("madvise", "never")),
                                                   Pair("thp_defrag", Pair("madvise", "always"))));
}

TEST(HostFactsTest, NumaBalancing) {
  EXPECT_THAT(Changed("numa_balancing"), UnorderedElementsAre(Pair("numa_balancing", Pair("0", "1"))));
}

TEST(HostFactsTest, CpufreqIsOneValuePerNodeOrMixed) {
  const RuntimeFacts before = Read("cpufreq", "before");
  EXPECT_EQ(before.fields.at("cpufreq_governor.node0"), "performance");
  EXPECT_EQ(before.fields.at("cpufreq_epp.node1"), "performance");
  EXPECT_THAT(Changed("cpufreq"),
              UnorderedElementsAre(Pair("cpufreq_governor.node0", Pair("performance", "mixed")),
                                   Pair("cpufreq_governor.node1", Pair("performance", "powersave")),
                                   Pair("cpufreq_epp.node1", Pair("performance", "balance_power"))));
}

TEST(HostFactsTest, CommandLineParametersByNameTheRestAsAHash) {
  const RuntimeFacts before = Read("cmdline", "before");
  EXPECT_EQ(before.fields.at("cmdline.mitigations"), "unset");
  EXPECT_THAT(Changed("cmdline"), UnorderedElementsAre(Pair("cmdline.mitigations", Pair("unset", "off")),
                                                       Pair("cmdline.hugepagesz", Pair("unset", "1G,2M")),
                                                       Pair("cmdline.hugepages", Pair("unset", "4,512")),
                                                       Pair("cmdline.intel_idle.max_cstate", Pair("unset", "1")),
                                                       Pair("cmdline.nohz_full", Pair("unset", "on"))))
      << "the other parameters did not change, so neither does their hash";
}

TEST(HostFactsTest, TheHashCoversUnwatchedParametersButNotTheKernelImage) {
  const auto base = CmdlineFacts("BOOT_IMAGE=/vmlinuz-6.1 root=UUID=1 ro quiet");
  EXPECT_EQ(CmdlineFacts("BOOT_IMAGE=/vmlinuz-6.6 initrd=/initrd-6.6 root=UUID=1 ro quiet").at("cmdline.other_hash"),
            base.at("cmdline.other_hash"));
  EXPECT_NE(CmdlineFacts("BOOT_IMAGE=/vmlinuz-6.1 root=UUID=1 ro").at("cmdline.other_hash"),
            base.at("cmdline.other_hash"));
  // A quoted value keeps its spaces and is one parameter.
  EXPECT_EQ(CmdlineFacts("isolcpus=\"2-3 nohz\" quiet").at("cmdline.isolcpus"), "\"2-3 nohz\"");
  EXPECT_EQ(CmdlineFacts("").size(), WatchedCmdlineParameters().size() + 1) << "every watched name, and the hash";
}

TEST(HostFactsTest, MemoryTiering) {
  EXPECT_THAT(Changed("tiering"), UnorderedElementsAre(Pair("demotion_enabled", Pair("false", "true")),
                                                       Pair("memory_tiers", Pair("tier4:0-2", "tier4:0-1;tier22:2"))));
}

TEST(HostFactsTest, NodeMemoryAndHugepagePools) {
  EXPECT_THAT(Changed("node_memory"),
              UnorderedElementsAre(Pair("node1.mem_total_bytes", Pair("8589934592", "8321499136")),
                                   Pair("node1.hugepages_2048kB", Pair("0", "512"))));
  const RuntimeFacts after = Read("node_memory", "after");
  ASSERT_EQ(after.nodes.size(), 2u);
  EXPECT_EQ(after.nodes[1].node, 1);
  EXPECT_EQ(after.nodes[1].mem_total_bytes, 8321499136ULL);
  EXPECT_THAT(after.nodes[1].hugepages, ElementsAre(Pair(2097152ULL, 512ULL), Pair(1073741824ULL, 0ULL)));
}

TEST(HostFactsTest, EdacDimmsErrorsAndPoisonedMemory) {
  const RuntimeFacts before = Read("edac", "before");
  const RuntimeFacts after = Read("edac", "after");
  EXPECT_THAT(Changed("edac"),
              UnorderedElementsAre(Pair("edac_memory",
                                        Pair("controllers=2 dimms=4 size_mib=65536 types=Registered-DDR4",
                                             "controllers=2 dimms=3 size_mib=49152 types=Registered-DDR4")),
                                   Pair("hardware_corrupted_bytes", Pair("0", "8192"))));
  ASSERT_TRUE(before.memory_errors && after.memory_errors);
  EXPECT_EQ(before.memory_errors->corrected, 2u);
  EXPECT_EQ(after.memory_errors->corrected, 9u);
  EXPECT_EQ(after.memory_errors->uncorrected, 0u);
  EXPECT_EQ(after.hardware_corrupted_bytes, 8192u);
}

TEST(HostFactsTest, AHostWithoutTheFilesHasUnknownFactsNotErrors) {
  const std::string root = Tree("absent", "nowhere");
  ASSERT_FALSE(std::filesystem::exists(root));
  const RuntimeFacts facts = ReadRuntimeFacts({root + "/proc", root + "/sys"}, kProbeCpus);
  for (const char* field :
       {"thp_enabled", "thp_defrag", "numa_balancing", "cpufreq_governor.node0", "cpufreq_epp.node1",
        "cmdline.other_hash", "demotion_enabled", "memory_tiers", "hardware_corrupted_bytes"}) {
    EXPECT_EQ(facts.fields.at(field), kUnknownFact) << field;
    EXPECT_THAT(facts.unknown, Contains(field));
  }
  EXPECT_EQ(facts.fields.at("edac_memory"), "no_edac");
  EXPECT_FALSE(facts.memory_errors);
  EXPECT_FALSE(facts.hardware_corrupted_bytes);
  EXPECT_TRUE(facts.nodes.empty());
  // A kernel before 6.9 has no weighted interleave: no fact, nothing unknown.
  EXPECT_FALSE(facts.weighted_interleave);
  EXPECT_FALSE(facts.fields.contains("weighted_interleave"));
  EXPECT_FALSE(facts.fields.contains("weighted_interleave_auto"));
}

TEST(HostFactsTest, WeightedInterleaveWeightsAndAutoMode) {
  EXPECT_THAT(Changed("weighted_interleave"),
              UnorderedElementsAre(Pair("weighted_interleave", Pair("0:16,1:16,2:1", "0:3,1:2,2:1")),
                                   Pair("weighted_interleave_auto", Pair("true", "false"))));
  const RuntimeFacts after = Read("weighted_interleave", "after");
  ASSERT_TRUE(after.weighted_interleave);
  EXPECT_EQ(after.weighted_interleave->auto_mode, std::optional<bool>(false));
  EXPECT_THAT(after.weighted_interleave->weights, ElementsAre(Pair(0, 3), Pair(1, 2), Pair(2, 1)));
}

// What a kernel never writes (0, over 255, text) is not a weight; an `auto`
// file that is missing (6.9-6.15) or unreadable leaves the mode unknown.
TEST(HostFactsTest, WeightedInterleaveIgnoresWhatTheKernelNeverWrites) {
  const std::filesystem::path root = std::filesystem::path(::testing::TempDir()) / "numaprobe_wi_hostile";
  const std::filesystem::path dir = root / "kernel/mm/mempolicy/weighted_interleave";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(dir);
  const std::map<std::string, std::string> files = {{"node0", "0"}, {"node1", "256"}, {"node2", "four"},
                                                    {"node3", "7"}, {"nodeX", "9"},   {"auto", "maybe"}};
  for (const auto& [name, text] : files) std::ofstream(dir / name) << text << '\n';
  const auto wi = ReadWeightedInterleave(root.string());
  ASSERT_TRUE(wi);
  EXPECT_FALSE(wi->auto_mode);
  EXPECT_THAT(wi->weights, ElementsAre(Pair(3, 7)));
  std::filesystem::remove(dir / "node3");
  const RuntimeFacts facts = ReadRuntimeFacts({root.string() + "/proc", root.string()}, kProbeCpus);
  EXPECT_EQ(facts.fields.at("weighted_interleave"), kUnknownFact);
  EXPECT_THAT(facts.unknown, Contains("weighted_interleave"));
  EXPECT_FALSE(facts.fields.contains("weighted_interleave_auto"));
  std::filesystem::remove_all(root);
}

TEST(HostFactsTest, SncModeIsCpuNodesPerPackage) {
  EXPECT_EQ(ReadHostInfo("cpu", Tree("snc", "before") + "/proc", Tree("snc", "before") + "/sys").nodes_per_package,
            "1");
  EXPECT_EQ(ReadHostInfo("cpu", Tree("snc", "after") + "/proc", Tree("snc", "after") + "/sys").nodes_per_package, "2")
      << "SNC2, the CPU-less node not counted";
  EXPECT_EQ(ReadHostInfo("cpu", "/nonexistent/proc", "/nonexistent/sys").nodes_per_package, kUnknownFact);
}

TEST(HostFactsTest, Hypervisor) {
  const HostInfo before =
      ReadHostInfo("cpu", Tree("hypervisor", "before") + "/proc", Tree("hypervisor", "before") + "/sys");
  const HostInfo after =
      ReadHostInfo("cpu", Tree("hypervisor", "after") + "/proc", Tree("hypervisor", "after") + "/sys");
  EXPECT_EQ(before.hypervisor, "none");
  EXPECT_EQ(after.hypervisor, "QEMU Standard PC (Q35 + ICH9, 2009)");
  EXPECT_EQ(after.microcode, "0x2b000590");
}

}  // namespace
}  // namespace numaprobe::daemon
