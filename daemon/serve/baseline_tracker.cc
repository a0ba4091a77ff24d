#include "daemon/serve/baseline_tracker.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/serve/state.h"
#include "daemon/common/wall_clock.h"

namespace numaprobe::daemon {

BaselineTracker::BaselineTracker(std::string state_directory, int rounds)
    : state_directory_(std::move(state_directory)), rounds_(rounds), recorder_(rounds) {}

std::string MeasurementSettings(const Config& config) {
  const auto& l = config.latency;
  const auto& b = config.bandwidth;
  // memory.budget is part of it: it caps the automatically sized latency buffer.
  return fmt::format(
      "latency.stride={};latency.buffer={};latency.loads={};bandwidth.buffer={};bandwidth.burst={};"
      "bandwidth.bursts={};bandwidth.threads={};memory.budget={};memory.pages={}",
      l.stride_bytes, l.buffer_bytes, l.loads_per_sample, b.buffer_bytes, b.burst_bytes, b.bursts, b.threads,
      config.memory.budget_bytes, kernels::PagePolicyName(config.memory.pages));
}

void BaselineTracker::Load(const std::string& fingerprint, const std::string& settings) {
  const LoadedState state = LoadState(state_directory_);
  // A valid file without a baseline is `numaprobe baseline reset`'s marker.
  const bool reset = state.status == LoadedState::Status::kOk && !state.baseline;
  const Baseline& mine = recorder_.baseline();
  const bool mine_matches = !origin_.empty() && mine.fingerprint == fingerprint && mine.settings == settings;
  if (!reset && state.baseline && state.baseline->complete && state.baseline->fingerprint == fingerprint &&
      state.baseline->settings == settings) {
    if (!(mine_matches && recorder_.complete())) {
      recorder_.Restore(*state.baseline);
      origin_ = "restored";
      spdlog::info("restored the baseline recorded {} for host fingerprint {}", state.baseline->created, fingerprint);
    }
    return;
  }
  // Keep recording; or keep the complete baseline in memory when the file
  // lost it (a save failed, or state_directory changed on reload).
  if (!reset && mine_matches && (!recorder_.complete() || !state.baseline)) return;
  if (reset) {
    origin_ = "reset";
    spdlog::info("the baseline was reset (numaprobe baseline reset)");
    // Acted on once: a later replan while recording must not restart it.
    if (auto error = RemoveState(state_directory_); !error.empty()) spdlog::warn("{}", error);
  } else if (state.status == LoadedState::Status::kCorrupt) {
    spdlog::error("state file unusable ({}); it will be replaced by a new baseline", state.error);
    origin_ = "state_file_corrupt";
  } else if (state.baseline && state.baseline->fingerprint != fingerprint) {
    spdlog::warn("host fingerprint changed from {} to {}: recording a new baseline", state.baseline->fingerprint,
                 fingerprint);
    origin_ = "fingerprint_changed";
  } else if (state.baseline && state.baseline->settings != settings) {
    spdlog::warn("measurement settings changed from {} to {}: recording a new baseline, the old one is not comparable",
                 state.baseline->settings.empty() ? "(not recorded)" : state.baseline->settings, settings);
    origin_ = "settings_changed";
  } else if (origin_.empty()) {
    origin_ = "first_start";
  } else if (mine.fingerprint != fingerprint) {  // changed before anything was saved
    origin_ = "fingerprint_changed";
  } else if (mine.settings != settings) {
    origin_ = "settings_changed";
  }
  recorder_.Reset(fingerprint, settings);
  spdlog::info("recording a baseline over the next {} complete rounds ({})", rounds_, origin_);
}

void BaselineTracker::BeginRound() {
  round_values_.clear();
  round_failures_ = 0;
}

void BaselineTracker::EndRound() {
  if (recorder_.complete()) return;
  if (round_failures_ > 0) {
    spdlog::info("{} probes of this round failed: the round does not count toward the baseline", round_failures_);
    return;
  }
  for (const auto& value : round_values_) recorder_.Add(value);
  if (!recorder_.EndRound(UtcNow("%Y-%m-%dT%H:%M:%SZ"))) return;
  if (auto error = SaveState(state_directory_, recorder_.baseline()); !error.empty()) {
    spdlog::error("cannot persist the baseline ({}); it is kept in memory only", error);
  } else {
    spdlog::info("baseline recorded and saved in {}", state_directory_);
  }
}

void BaselineTracker::Publish(Snapshot& s) const {
  s.baseline_origin = origin_;
  s.baseline_complete = recorder_.complete();
  s.baseline = recorder_.complete() ? recorder_.baseline().values : std::vector<BaselineValue>{};
}

}  // namespace numaprobe::daemon
