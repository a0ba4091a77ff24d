// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/cpu_chooser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "kernels/cpu_idle.h"
#include "kernels/cpulist.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;

// Busy shares closer than this count as equally idle: /proc/stat ticks are
// 10 ms, so over a 100 ms window one tick is 0.1. Within it the planned CPU
// (or the higher-numbered one, see RepresentativeCpu) wins, so a quiet host
// measures from the same CPU every time.
constexpr double kSameIdleness = 0.1;
// A busy SMT sibling slows the probe too, but less than a busy CPU itself.
constexpr double kSiblingWeight = 0.25;

}  // namespace

CpuChooser::CpuChooser(const k::Topology& topology, CpuChooserSources sources)
    : topology_(topology), sources_(std::move(sources)) {
  reserved_ = k::ReadCpuListFile(sources_.isolated);
  for (int cpu : k::ReadCpuListFile(sources_.nohz_full)) reserved_.push_back(cpu);
}

std::vector<int> CpuChooser::Eligible(int node) const {
  std::vector<int> cpus;
  if (const k::NodeInfo* info = topology_.FindNode(node)) {
    for (int cpu : info->cpus) {
      if (!k::ListHas(reserved_, cpu)) cpus.push_back(cpu);
    }
  }
  return cpus;
}

std::map<int, double> CpuChooser::SampleBusy(std::chrono::milliseconds window) const {
  const k::CpuTimes before = sources_.read_times();
  if (before.empty()) return {};
  std::this_thread::sleep_for(window);
  return k::BusyFractions(before, sources_.read_times());
}

CpuChoice CpuChooser::Choose(const MemoryPair& pair, int count) {
  CpuChoice choice;
  std::vector<int> candidates = Eligible(pair.cpu_node);
  // Nothing to choose between: the planned CPU alone (also when every CPU of
  // the node is reserved, where the operator's plan stands).
  const bool movable = pair.any_cpu_of_node && !candidates.empty();
  if (!movable && count <= 1) return {{pair.cpu}, ""};
  const std::string reserved_why =
      k::ListHas(candidates, pair.cpu) ? "" : fmt::format("cpu {} is isolated or nohz_full", pair.cpu);
  if (candidates.size() == 1 && count <= 1) return {{candidates.front()}, reserved_why};

  const std::map<int, double> busy = SampleBusy(sources_.window);
  auto busy_of = [&](int cpu) {
    const auto it = busy.find(cpu);
    return it == busy.end() ? 0.0 : it->second;  // no information: as if idle
  };
  // A CPU's cost to a probe: its own busy share, plus some of its siblings'.
  // Computed once, before sorting: the comparator must not scan the vector
  // it is sorting.
  std::map<int, double> scores;
  for (int cpu : candidates) {
    double sibling = 0;
    for (int other : candidates) {
      if (other != cpu && topology_.Relation(cpu, other) == k::CpuRelation::kSmt) {
        sibling = std::max(sibling, busy_of(other));
      }
    }
    scores[cpu] = busy_of(cpu) + kSiblingWeight * sibling;
  }
  auto score = [&](int cpu) { return scores.at(cpu); };
  // Idlest first in steps of kSameIdleness; within a step the planned CPU,
  // then higher-numbered CPUs (low CPUs carry housekeeping and interrupts).
  auto rank = [&](int cpu) { return std::make_tuple(std::floor(score(cpu) / kSameIdleness), cpu != pair.cpu, -cpu); };
  std::sort(candidates.begin(), candidates.end(), [&](int a, int b) { return rank(a) < rank(b); });

  int first = pair.cpu;
  if (movable) {
    first = candidates.front();
    // Keep the planned CPU unless the best is clearly idler.
    if (first != pair.cpu && k::ListHas(candidates, pair.cpu) && score(pair.cpu) <= score(first) + kSameIdleness) {
      first = pair.cpu;
    }
    if (!reserved_why.empty()) {
      choice.why = reserved_why;
    } else if (first != pair.cpu) {
      choice.why = fmt::format("cpu {} busy {:.0f}%, cpu {} busy {:.0f}%", pair.cpu, 100 * busy_of(pair.cpu), first,
                               100 * busy_of(first));
    }
  }
  choice.cpus.push_back(first);
  // Helpers for multi-thread probes, idlest first; among equally idle ones,
  // CPUs on cores not yet taken before SMT siblings of taken ones. (A
  // sibling of our own thread costs us some bandwidth; a sibling of a busy
  // CPU would cost the workload.)
  for (auto group = candidates.begin(); group != candidates.end();) {
    const auto bucket = std::get<0>(rank(*group));
    const auto end = std::find_if(group, candidates.end(), [&](int cpu) { return std::get<0>(rank(cpu)) != bucket; });
    for (const bool siblings_too : {false, true}) {
      for (auto it = group; it != end; ++it) {
        if (static_cast<int>(choice.cpus.size()) >= count) return choice;
        const bool shares_core = std::any_of(choice.cpus.begin(), choice.cpus.end(), [&](int taken) {
          return topology_.Relation(*it, taken) == k::CpuRelation::kSmt;
        });
        if (!k::ListHas(choice.cpus, *it) && (siblings_too || !shares_core)) choice.cpus.push_back(*it);
      }
    }
    group = end;
  }
  return choice;
}

}  // namespace numaprobe::daemon
