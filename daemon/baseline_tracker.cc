#include "daemon/baseline_tracker.h"

#include <spdlog/spdlog.h>

#include "daemon/state.h"
#include "daemon/wall_clock.h"

namespace numaprobe::daemon {

BaselineTracker::BaselineTracker(std::string state_directory, int rounds)
    : state_directory_(std::move(state_directory)), rounds_(rounds), recorder_(rounds) {}

void BaselineTracker::Load(const std::string& fingerprint) {
  const LoadedState state = LoadState(state_directory_);
  const bool mine_matches = !origin_.empty() && recorder_.baseline().fingerprint == fingerprint;
  if (state.baseline && state.baseline->complete && state.baseline->fingerprint == fingerprint) {
    if (!(mine_matches && recorder_.complete())) {
      recorder_.Restore(*state.baseline);
      origin_ = "restored";
      spdlog::info("restored the baseline recorded {} for host fingerprint {}", state.baseline->created, fingerprint);
    }
    return;
  }
  if (mine_matches && !recorder_.complete()) return;  // keep recording
  if (state.status == LoadedState::Status::kCorrupt) {
    spdlog::error("state file unusable ({}); it will be replaced by a new baseline", state.error);
    origin_ = "state_file_corrupt";
  } else if (state.baseline) {
    spdlog::warn("host fingerprint changed from {} to {}: recording a new baseline", state.baseline->fingerprint,
                 fingerprint);
    origin_ = "fingerprint_changed";
  } else {
    origin_ = origin_.empty() ? "first_start" : "reset";
  }
  recorder_.Reset(fingerprint);
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
