#include "daemon/serve/baseline_tracker.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/common/wall_clock.h"
#include "daemon/probing/probe_table.h"
#include "daemon/serve/state.h"

namespace numaprobe::daemon {

BaselineTracker::BaselineTracker(std::string state_directory, int rounds)
    : state_directory_(std::move(state_directory)), rounds_(rounds), recorder_(rounds) {}

std::string MeasurementSettings(const Config& config) {
  std::string settings;
  for (const ProbeKind* kind : ProbeTable()) {
    const std::string part = kind->SettingsFingerprint(config);
    if (!part.empty()) settings += part + ";";
  }
  // memory.budget is part of it: it caps automatically sized probe buffers.
  return settings + fmt::format("memory.budget={};memory.pages={}", config.memory.budget_bytes,
                                kernels::PagePolicyName(config.memory.pages));
}

void BaselineTracker::Reconfigure(std::string state_directory, int rounds) {
  state_directory_ = std::move(state_directory);
  if (rounds != rounds_ && !recorder_.complete()) {
    spdlog::info("baseline.rounds changed from {} to {}: the recording in progress uses the new count", rounds_,
                 rounds);
  }
  rounds_ = rounds;
  recorder_.set_rounds(rounds);
}

void BaselineTracker::StartRecording(const Now& now) {
  recorder_.Reset(now.fingerprint, now.settings);
  save_pending_ = false;  // what was pending is no longer the baseline
  recorder_.mutable_baseline().topology = now.topology;
  recorder_.mutable_baseline().facts = now.facts;
  recorder_.mutable_baseline().memory_errors = now.memory_errors;
  spdlog::info("recording a baseline over the next {} complete rounds ({})", rounds_, origin_);
}

namespace {

// The host fact changes between `before` and `after`, in field order.
std::vector<HostChange> Changes(const std::map<std::string, std::string>& before,
                                const std::map<std::string, std::string>& after, double unix_now) {
  std::vector<HostChange> changes;
  for (const auto& [field, value] : after) {
    const auto old = before.find(field);
    // A fact not recorded before (a state file from an older numaprobe) has
    // no "before" to compare: it is taken as it is now, not as a change.
    if (old == before.end() || old->second == value) continue;
    changes.push_back({field, old->second, value, unix_now});
  }
  return changes;
}

// Keeps the last kMaxHostChanges: a flapping setting must not grow the state
// file or the exported series without bound.
void Append(std::vector<HostChange>& changes, HostChange change) {
  changes.push_back(std::move(change));
  if (changes.size() > kMaxHostChanges) changes.erase(changes.begin(), changes.end() - kMaxHostChanges);
}

}  // namespace

void BaselineTracker::Load(const std::string& fingerprint, const std::string& settings, const std::string& topology,
                           const HostObservation& host, double unix_now) {
  const Now now{fingerprint, settings, topology, host.facts, host.memory_errors, unix_now};
  const LoadedState state = LoadState(state_directory_);
  // A marker acted on whose removal failed (a read-only directory), or a
  // corrupt file already being replaced, is not news on the next SIGHUP: it
  // falls through to what is in memory below instead of restarting it.
  const bool handled = !state.file_id.empty() && state.file_id == handled_file_;
  if (state.status == LoadedState::Status::kOk && !state.baseline && !handled) return ActOnMarker(state, now);
  if (state.status == LoadedState::Status::kCorrupt && !handled) return ReplaceCorrupt(state, now);
  if (state.status == LoadedState::Status::kUnreadable) return KeepUnreadable(state.error, now);
  if (state.baseline && state.baseline->complete) return AdoptStored(*state.baseline, now);
  // No complete baseline in the file: keep recording; or keep the complete
  // baseline in memory when the file lost it (a save failed, or
  // state_directory changed on reload).
  if (MineMatches(now)) return KeepMine(now);
  StartAnew(now);
}

bool BaselineTracker::MineMatches(const Now& now) const {
  const Baseline& mine = recorder_.baseline();
  return !origin_.empty() && mine.topology == now.topology && mine.settings == now.settings;
}

// An operator's marker (a valid file without a baseline): acted on once (the
// file is removed), so a later replan while recording does not restart the
// recording.
void BaselineTracker::ActOnMarker(const LoadedState& state, const Now& now) {
  if (state.marker == "accept") {
    origin_ = "accepted";
    spdlog::warn(
        "the current level is accepted as the new baseline (numaprobe baseline accept); {} host changes "
        "since the old one are cleared",
        recorder_.baseline().changes.size());
  } else {
    origin_ = "reset";
    spdlog::info("the baseline was reset (numaprobe baseline reset)");
  }
  handled_file_.clear();
  marker_removal_pending_ = false;
  if (auto error = RemoveState(state_directory_); !error.empty()) {
    // Acted on once all the same; the same file is not acted on again (its
    // identity is remembered), and the failed write shows in the metrics.
    spdlog::error("{}; the marker is acted on once and its removal retried after every round", error);
    handled_file_ = state.file_id;
    marker_removal_pending_ = true;
    ++write_failures_;
    last_write_ok_ = false;
  }
  StartRecording(now);
}

// Retried after every round: the marker was acted on, its file stayed.
void BaselineTracker::RetryMarkerRemoval() {
  if (!marker_removal_pending_) return;
  if (auto error = RemoveState(state_directory_); !error.empty()) {
    ++write_failures_;
    spdlog::debug("still cannot remove the marker: {}", error);
    return;
  }
  spdlog::info("the marker in {} is removed", state_directory_);
  marker_removal_pending_ = false;
  handled_file_.clear();
  if (!save_pending_) last_write_ok_ = true;
}

// The file exists but cannot be read (EACCES, EIO): what it holds is
// unknown, so it is neither adopted nor replaced (SaveState refuses to, and
// that failure is counted). The baseline in memory goes on if it matches;
// otherwise one is recorded in memory.
void BaselineTracker::KeepUnreadable(const std::string& error, const Now& now) {
  spdlog::error(
      "state file unusable ({}); it is kept, not replaced, and the baseline lives in memory until it can be "
      "read",
      error);
  if (MineMatches(now)) return KeepMine(now);
  origin_ = "state_file_unreadable";
  StartRecording(now);
}

void BaselineTracker::ReplaceCorrupt(const LoadedState& state, const Now& now) {
  spdlog::error("state file unusable ({}); it will be replaced by a new baseline (a copy is kept)", state.error);
  handled_file_ = state.file_id;
  origin_ = "state_file_corrupt";
  StartRecording(now);
}

// A complete baseline from the file stays the reference if it is comparable
// with today's figures; host changes since it was recorded are added to it
// (and saved). Otherwise a new recording starts, saying why.
void BaselineTracker::AdoptStored(Baseline stored, const Now& now) {
  bool save = false;
  if (stored.topology.empty() && stored.fingerprint == now.fingerprint) {
    // Written by a numaprobe that kept only the fingerprint hash: the same
    // hash is the same host, so the baseline takes today's topology and facts.
    stored.topology = now.topology;
    stored.facts = now.facts;
    save = true;
  }
  if (!stored.memory_errors && now.memory_errors) {
    // Kept from now on: a baseline saved before they were counted starts here.
    stored.memory_errors = now.memory_errors;
    save = true;
  }
  if (const std::string why = WhyNotComparable(stored, now); !why.empty()) {
    origin_ = why;
    StartRecording(now);
    return;
  }
  if (RecordHostChanges(stored, now)) save = true;
  const bool same_as_mine = recorder_.complete() && recorder_.baseline().created == stored.created && MineMatches(now);
  if (!same_as_mine) {
    origin_ = "restored";
    spdlog::info("restored the baseline recorded {} (host fingerprint then {}, now {})", stored.created,
                 stored.fingerprint, now.fingerprint);
  }
  if (save) Persist(stored, "the host changes");
  recorder_.Restore(std::move(stored));
}

std::string BaselineTracker::WhyNotComparable(const Baseline& stored, const Now& now) {
  if (stored.topology.empty()) {
    // A fingerprint-only baseline (AdoptStored) of another fingerprint: it
    // cannot say what changed.
    spdlog::warn(
        "the stored baseline (host fingerprint {}) predates recorded topologies and the fingerprint is "
        "now {}: recording a new baseline",
        stored.fingerprint, now.fingerprint);
    return "topology_changed";
  }
  if (stored.topology != now.topology) {
    spdlog::warn(
        "NUMA topology changed from {} to {} (node count or distances: SNC/NPS mode, a node gone): the old "
        "pairs are not comparable, recording a new baseline",
        stored.topology, now.topology);
    return "topology_changed";
  }
  if (stored.settings != now.settings) {
    spdlog::warn("measurement settings changed from {} to {}: recording a new baseline, the old one is not comparable",
                 stored.settings.empty() ? "(not recorded)" : stored.settings, now.settings);
    return "settings_changed";
  }
  return "";
}

bool BaselineTracker::RecordHostChanges(Baseline& stored, const Now& now) {
  bool changed = false;
  for (HostChange& change : Changes(stored.facts, now.facts, now.unix_now)) {
    spdlog::warn(
        "host {} changed: {} -> {}; the baseline recorded {} stays the reference (numaprobe baseline "
        "accept adopts the new level)",
        change.field, change.before, change.after, stored.created);
    Append(stored.changes, std::move(change));
    changed = true;
  }
  // Also facts not recorded before (Changes skips them): saved from now on.
  for (const auto& [field, value] : now.facts) {
    if (stored.facts[field] != value) changed = true;
    stored.facts[field] = value;
  }
  // A file from before the bound: keep its most recent changes.
  if (stored.changes.size() > kMaxHostChanges) {
    stored.changes.erase(stored.changes.begin(), stored.changes.end() - kMaxHostChanges);
    changed = true;
  }
  return changed;
}

// The recording in progress, or the complete baseline in memory, matches
// today's topology and settings: it goes on; a complete one records the host
// changes as a restored one would.
void BaselineTracker::KeepMine(const Now& now) {
  ObserveHost(HostObservation(now.facts, now.memory_errors), now.unix_now);
}

std::map<std::string, std::string> BaselineTracker::WithMemoryErrors(const HostObservation& host, Baseline& baseline) {
  std::map<std::string, std::string> facts = host.facts;
  errors_since_baseline_.reset();
  if (!host.memory_errors) {
    facts["memory_errors_since_baseline"] = "no_edac";
    return facts;
  }
  const MemoryErrorCounts& now = *host.memory_errors;
  if (!baseline.memory_errors) baseline.memory_errors = now;  // EDAC appeared: count from here
  MemoryErrorCounts& then = *baseline.memory_errors;
  if (now.corrected < then.corrected || now.uncorrected < then.uncorrected) {
    spdlog::warn(
        "EDAC error counters went down (corrected {} -> {}, uncorrected {} -> {}: a reboot or a driver reload); "
        "errors since the baseline are counted from zero again",
        then.corrected, now.corrected, then.uncorrected, now.uncorrected);
    then = MemoryErrorCounts{};
  }
  errors_since_baseline_ = MemoryErrorCounts{now.corrected - then.corrected, now.uncorrected - then.uncorrected};
  facts["memory_errors_since_baseline"] = errors_since_baseline_->uncorrected > 0 ? "uncorrected"
                                          : errors_since_baseline_->corrected > 0 ? "corrected"
                                                                                  : "none";
  return facts;
}

void BaselineTracker::ObserveHost(const HostObservation& host, double unix_now) {
  Baseline& mine = recorder_.mutable_baseline();
  const std::map<std::string, std::string> facts = WithMemoryErrors(host, mine);
  const char* reference = recorder_.complete() ? "the baseline stays the reference" : "the baseline being recorded";
  bool changed = false;
  for (HostChange& change : Changes(mine.facts, facts, unix_now)) {
    spdlog::warn("host {} changed: {} -> {}; {}", change.field, change.before, change.after, reference);
    Append(mine.changes, std::move(change));
    changed = true;
  }
  mine.facts = facts;
  // A recording in progress is saved when it completes, with its changes.
  if (changed && recorder_.complete()) Persist(mine, "the host changes");
}

// Nothing to adopt or keep: record a new baseline, the origin saying why.
void BaselineTracker::StartAnew(const Now& now) {
  const Baseline& mine = recorder_.baseline();
  if (origin_.empty()) {
    origin_ = "first_start";
  } else if (mine.topology != now.topology) {  // changed before anything was saved
    spdlog::warn("NUMA topology changed from {} to {}: recording a new baseline", mine.topology, now.topology);
    origin_ = "topology_changed";
  } else {
    spdlog::warn("measurement settings changed from {} to {}: recording a new baseline", mine.settings, now.settings);
    origin_ = "settings_changed";
  }
  StartRecording(now);
}

void BaselineTracker::BeginRound() {
  round_values_.clear();
  round_failures_ = 0;
}

void BaselineTracker::EndRound() {
  RetryMarkerRemoval();
  if (recorder_.complete()) {
    if (save_pending_) Persist(recorder_.baseline(), "the baseline");
    return;
  }
  if (round_failures_ > 0) {
    spdlog::info("{} probes of this round failed: the round does not count toward the baseline", round_failures_);
    return;
  }
  for (const auto& value : round_values_) recorder_.Add(value);
  if (!recorder_.EndRound(UtcNow("%Y-%m-%dT%H:%M:%SZ"))) return;
  Persist(recorder_.baseline(), "the baseline");
}

void BaselineTracker::Persist(const Baseline& baseline, const char* what) {
  if (auto error = SaveState(state_directory_, baseline); !error.empty()) {
    ++write_failures_;
    last_write_ok_ = false;
    // Logged once per outage, not once per round: the metric counts the rest.
    if (!save_pending_) {
      spdlog::error("cannot persist {} ({}); kept in memory only, retried after every round", what, error);
    } else {
      spdlog::debug("still cannot persist {} ({})", what, error);
    }
    save_pending_ = true;
    return;
  }
  if (save_pending_) {
    spdlog::info("the state file in {} is written again after {} failed attempts", state_directory_, write_failures_);
  } else {
    spdlog::info("{} saved in {}", what, state_directory_);
  }
  save_pending_ = false;
  last_write_ok_ = true;
}

void BaselineTracker::Publish(Snapshot& s) const {
  s.state_write_successful = last_write_ok_;
  s.state_write_failures_total = write_failures_;
  s.baseline_origin = origin_;
  s.baseline_complete = recorder_.complete();
  s.baseline = recorder_.complete() ? recorder_.baseline().values : std::vector<BaselineValue>{};
  s.baseline_spread = recorder_.complete() ? recorder_.baseline().spread : std::vector<BaselineValue>{};
  s.host_changes = recorder_.baseline().changes;
  s.memory_errors_since_baseline = errors_since_baseline_;
}

std::optional<double> BaselineTracker::ValueOf(const BaselineValue& figure) const {
  if (!recorder_.complete()) return std::nullopt;
  for (const BaselineValue& v : recorder_.baseline().values) {
    if (v.probe == figure.probe && v.cpu == figure.cpu && v.cpu_node == figure.cpu_node &&
        v.mem_node == figure.mem_node && v.op == figure.op)
      return v.value;
  }
  return std::nullopt;
}

}  // namespace numaprobe::daemon
