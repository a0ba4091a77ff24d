#include "daemon/serve/baseline.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "kernels/stats.h"

namespace numaprobe::daemon {
namespace {

// One pair of one probe: the value is deliberately not part of the key, so
// every round's figure for the same pair lands in the same sample list.
std::string KeyOf(const BaselineValue& v) {
  return fmt::format("{}|{}|{}|{}|{}", v.probe, v.cpu, v.cpu_node, v.mem_node, v.op);
}

// Numeric order (node 2 before node 10), so the state file and the metrics
// list pairs the way a reader expects, not in string-key order.
bool PairLess(const BaselineValue& a, const BaselineValue& b) {
  return std::tie(a.probe, a.cpu_node, a.mem_node, a.cpu, a.op) <
         std::tie(b.probe, b.cpu_node, b.mem_node, b.cpu, b.op);
}

}  // namespace

void BaselineRecorder::Restore(Baseline baseline) {
  // An incomplete baseline on disk would mix rounds from before a restart with
  // rounds after it; recording anew is simpler and loses at most a few rounds.
  if (!baseline.complete) return;
  baseline_ = std::move(baseline);
  std::sort(baseline_.values.begin(), baseline_.values.end(), PairLess);
  std::sort(baseline_.spread.begin(), baseline_.spread.end(), PairLess);
  pending_.clear();
  rounds_seen_ = 0;
  round_has_values_ = false;
}

void BaselineRecorder::Reset(const std::string& fingerprint, const std::string& settings) {
  baseline_ = Baseline{};
  baseline_.fingerprint = fingerprint;
  baseline_.settings = settings;
  pending_.clear();
  rounds_seen_ = 0;
  round_has_values_ = false;
}

void BaselineRecorder::Add(const BaselineValue& value) {
  if (baseline_.complete) return;  // the baseline is fixed until Reset()
  auto [it, inserted] = pending_.try_emplace(KeyOf(value), value, std::vector<double>{});
  it->second.second.push_back(value.value);
  round_has_values_ = true;
}

bool BaselineRecorder::EndRound(const std::string& now_rfc3339) {
  if (baseline_.complete) return false;
  // A round in which every probe failed says nothing about the host; counting
  // it would let a baseline complete with fewer samples than configured.
  if (!round_has_values_) return false;
  round_has_values_ = false;
  ++rounds_seen_;
  if (rounds_seen_ < rounds_) return false;

  baseline_.values.clear();
  baseline_.spread.clear();
  baseline_.values.reserve(pending_.size());
  for (const auto& [key, entry] : pending_) {
    const auto& [labels, samples] = entry;
    const kernels::SampleStats stats = kernels::Summarize(samples);
    BaselineValue value = labels;
    value.value = stats.median;
    baseline_.values.push_back(value);
    value.value = stats.median > 0 ? (stats.max - stats.min) / stats.median : 0;
    baseline_.spread.push_back(std::move(value));
  }
  std::sort(baseline_.values.begin(), baseline_.values.end(), PairLess);
  std::sort(baseline_.spread.begin(), baseline_.spread.end(), PairLess);
  baseline_.created = now_rfc3339;
  baseline_.complete = true;
  pending_.clear();
  return true;
}

}  // namespace numaprobe::daemon
