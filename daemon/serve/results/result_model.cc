// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/results/result_model.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "daemon/common/memory_return.h"
#include "daemon/common/wall_clock.h"
#include "daemon/probing/probe_table.h"
#include "daemon/serve/results/settings_change.h"
#include "daemon/serve/snapshot_update.h"

namespace numaprobe::daemon {
namespace {

constexpr const char* kReference = "the baseline stays the reference (numaprobe baseline accept adopts the new level)";

std::string MemorySettings(const Config& config) {
  return fmt::format("memory.budget={};memory.pages={}", config.memory.budget_bytes,
                     kernels::PagePolicyName(config.memory.pages));
}

std::string Rfc3339(double unix_seconds) { return UtcTime(unix_seconds, "%Y-%m-%dT%H:%M:%SZ"); }

// A change an operator declared planned: "field=value" (that value) or "field=*" (any).
bool Matches(const std::string& rule, const HostChange& change) {
  const auto eq = rule.find('=');
  if (eq == std::string::npos || rule.compare(0, eq, change.field) != 0 || eq != change.field.size()) return false;
  const std::string value = rule.substr(eq + 1);
  return value == "*" || value == change.after;
}

}  // namespace

std::string LegacyMeasurementSettings(const Config& config) {
  std::string settings;
  for (const ProbeKind* kind : ProbeTable()) {
    const std::string part = kind->SettingsFingerprint(config);
    if (!part.empty()) settings += part + ";";
  }
  return settings + MemorySettings(config);
}

std::map<std::string, std::string> MeasurementSettingsByKind(const Config& config) {
  std::map<std::string, std::string> settings;
  for (const ProbeKind* kind : ProbeTable()) {
    if (kind->traits().has_baseline)
      settings[std::string(kind->name())] = kind->SettingsFingerprint(config) + ";" + MemorySettings(config);
  }
  return settings;
}

ResultModel::ResultModel(ResultStore& store, std::unique_ptr<StateStorage> storage, const Config& config,
                         std::int64_t save_spacing_ns)
    : store_(store),
      storage_(std::move(storage)),
      budget_ratio_(config.schedule.duty_cycle),
      save_spacing_ns_(save_spacing_ns) {
  Reconfigure(nullptr, config);
}

void ResultModel::Reconfigure(std::unique_ptr<StateStorage> storage, const Config& config) {
  if (storage && storage->Where() != storage_->Where()) {
    // What was learnt goes with the daemon: written to the new directory at once.
    spdlog::info("state directory changed from {} to {}: the state is written there", storage_->Where(),
                 storage->Where());
    storage_ = std::move(storage);
    unreadable_.clear();
    MarkChanged(true);
  }
  if (figures_needed_ != 0 && figures_needed_ != config.baseline.rounds && Recording()) {
    spdlog::info("baseline.rounds changed from {} to {}: the series still recording need {} figures", figures_needed_,
                 config.baseline.rounds, config.baseline.rounds);
  }
  figures_needed_ = config.baseline.rounds;
  accept_changes_ = config.baseline.accept_changes;
  per_cpu_ = config.targets.per_cpu;
  settings_ = MeasurementSettingsByKind(config);
  legacy_settings_ = LegacyMeasurementSettings(config);
  own_schedule_kinds_.clear();
  for (const ProbeKind* kind : ProbeTable()) {
    if (kind->OwnScheduleOf(config)) own_schedule_kinds_.emplace(kind->name());
  }
}

void ResultModel::Plan(const PlannedHost& planned, const HostObservation& host, const RuntimeFacts& runtime,
                       Moment now) {
  fingerprint_ = planned.fingerprint;
  topology_signature_ = planned.topology_signature;
  last_host_ = host;
  if (!restored_) {
    restored_ = true;
    Restore(now);
  } else if (planned.topology_signature != contents_.host.topology) {
    spdlog::warn(
        "NUMA topology changed from {} to {} (node count or distances: SNC/NPS mode, a node gone): the old pairs "
        "are not comparable, recording a new baseline",
        contents_.host.topology, planned.topology_signature);
    StartOver(kOriginTopologyChanged, now);
  } else {
    ObserveHostFacts(now);
  }
  CompareSettings(now);
  TrackPlannedSeries(planned.series, now);
  AcceptPlannedChanges(now);
  Write(now);
  PublishView([&](Snapshot& s) {
    PlanSnapshot(s, planned.config, planned.topology, planned.plan, planned.host, planned.fingerprint);
    s.runtime_facts = runtime;
    s.refresh_interval_seconds = planned.refresh_interval_seconds;
    s.test_fault_injection_active = planned.fault_injection_active;
  });
}

void ResultModel::Restore(Moment now) {
  const StoredText stored = storage_->Read(kStateFile);
  if (stored.status == StoredText::Status::kMissing) {
    StartOver(kOriginFirstStart, now);
    // A request written before the first state file (`numaprobe baseline
    // reset` on an empty directory) is acted on now, not left to surprise a
    // later start.
    CheckRequest(now);
    return;
  }
  if (stored.status == StoredText::Status::kUnreadable) {
    unreadable_ = stored.error;
    spdlog::error(
        "{}: the state file is left as it is and nothing is written over it; what is learnt now is kept in memory "
        "only until it can be read (fix its permissions, then reload with SIGHUP)",
        stored.error);
    StartOver(kOriginStateFileUnreadable, now);
    return;
  }
  LoadedState state;
  if (stored.status == StoredText::Status::kRefused) {
    state.status = LoadedState::Status::kCorrupt;
    state.error = stored.error;
  } else {
    state = ParseState(stored.text, storage_->Where() + "/" + kStateFile);
    // The parser's garbage (up to a million JSON values) is freed by now:
    // hand it back rather than keep it for the rest of the run.
    ReturnFreedMemory();
  }
  if (state.status == LoadedState::Status::kCorrupt) {
    const std::string stamp = UtcTime(now.unix_seconds, "%Y%m%dT%H%M%SZ");
    const std::string kept = storage_->KeepCorrupt(kStateFile, stamp);
    spdlog::error("state file unusable ({}); {}; a new baseline is recorded", state.error,
                  kept.empty() ? fmt::format("kept as {}.corrupt-{}", kStateFile, stamp) : kept);
    StartOver(kOriginStateFileCorrupt, now);
    return;
  }
  if (!state.legacy_marker.empty()) {
    // A format-1 marker (an older `numaprobe baseline accept` or `reset`).
    spdlog::info("the state file holds an operator's {} (numaprobe baseline {})", state.legacy_marker,
                 state.legacy_marker);
    StartOver(state.legacy_marker == "accept" ? kOriginAccepted : kOriginReset, now);
  } else {
    AdoptStored(std::move(*state.contents), state.format, state.legacy_settings, now);
  }
  CheckRequest(now);
}

void ResultModel::AdoptStored(StateContents stored, int format, const std::string& legacy_settings, Moment now) {
  if (stored.host.topology.empty() && stored.host.fingerprint == fingerprint_) {
    // Written by a numaprobe that kept only the fingerprint hash: the same
    // hash is the same host, so the baseline takes today's topology.
    stored.host.topology = topology_signature_;
  }
  if (stored.host.topology != topology_signature_) {
    spdlog::warn(
        "NUMA topology changed from {} to {} (node count or distances: SNC/NPS mode, a node gone): the old pairs "
        "are not comparable, recording a new baseline",
        stored.host.topology.empty() ? "(not recorded, fingerprint " + stored.host.fingerprint + ")"
                                     : stored.host.topology,
        topology_signature_);
    StartOver(kOriginTopologyChanged, now);
    return;
  }
  if (format == 1) {
    // One settings text for every kind: the same, every kind's settings hold.
    if (legacy_settings == legacy_settings_) stored.settings = settings_;
    if (!stored.host.memory_errors) stored.host.memory_errors = last_host_.memory_errors;
  }
  std::size_t armed = 0;
  for (const auto& [key, history] : stored.series) armed += history.armed().has_value();
  // A topology change stays said until an operator acknowledges it.
  if (stored.host.origin != kOriginTopologyChanged) stored.host.origin = kOriginRestored;
  contents_ = std::move(stored);
  spdlog::info("restored the state of {} series ({} baselines armed) recorded since {}", contents_.series.size(), armed,
               contents_.host.since);
  ObserveHostFacts(now);
  MarkChanged(false);
}

void ResultModel::StartOver(const char* origin, Moment now) {
  // The schedule's memory (task costs, rotation) stays: it is of the host,
  // not of the baseline.
  contents_.host.Begin(origin, fingerprint_, topology_signature_, last_host_, Rfc3339(now.unix_seconds));
  contents_.series.clear();
  contents_.settings = settings_;
  spdlog::info("recording a baseline of every series from its next {} figures ({})", figures_needed_, origin);
  MarkChanged(true);
}

void ResultModel::ObserveHostFacts(Moment now) {
  // Rare, and when first seen is what an alert names: saved at once.
  if (!contents_.host.Observe(last_host_, now.unix_seconds, kReference).empty()) MarkChanged(true);
}

void ResultModel::CompareSettings(Moment now) {
  for (const auto& [kind, settings] : settings_) {
    const auto stored = contents_.settings.find(kind);
    const bool has_series = std::any_of(contents_.series.begin(), contents_.series.end(),
                                        [&](const auto& entry) { return entry.first.probe == kind; });
    if (stored != contents_.settings.end() && stored->second == settings) continue;
    if (has_series) {
      const std::string changed = stored == contents_.settings.end()
                                      ? "its settings were not recorded"
                                      : SettingsChanges({*stored}, {{kind, settings}}).at(0).Describe();
      spdlog::warn(
          "{} settings changed ({}): its series record new baselines from their next {} figures and raise no drift "
          "alert until then (`numaprobe topology --config.file FILE` previews how long); the old baselines are not "
          "comparable",
          kind, changed, figures_needed_);
      for (auto& [key, history] : contents_.series) {
        if (key.probe == kind) history.Rerecord(now.unix_seconds, /*forget_recent=*/true);
      }
      if (contents_.host.origin != kOriginTopologyChanged) contents_.host.origin = kOriginSettingsChanged;
    }
    contents_.settings[kind] = settings;
    MarkChanged(true);
  }
}

void ResultModel::TrackPlannedSeries(const std::set<SeriesKey>& series, Moment now) {
  const bool knew_some = !contents_.series.empty();
  std::size_t added = 0;
  for (const SeriesKey& key : series) {
    if (contents_.series.contains(key)) continue;
    contents_.series.emplace(key, SeriesHistory::Restored({}, {}, now.unix_seconds, std::nullopt));
    ++added;
  }
  // Series that left the plan (a cpuset that shrank, a pair or op removed)
  // keep their baseline; their recent figures would be stale when they return.
  for (const SeriesKey& key : planned_) {
    if (!series.contains(key)) contents_.series.at(key).ForgetRecent();
  }
  if (added > 0 && knew_some) {
    spdlog::info(
        "{} series joined the plan ({} planned now): each records a baseline of its own from its next {} "
        "figures; the others keep theirs",
        added, series.size(), figures_needed_);
    contents_.host.Note(
        {kPlannedSeriesField, std::to_string(planned_.size()), std::to_string(series.size()), now.unix_seconds});
  }
  if (added > 0) MarkChanged(false);
  planned_ = series;
  stale_ = true;
}

void ResultModel::AcceptPlannedChanges(Moment now) {
  for (const HostChange& change : contents_.host.changes) {
    for (const std::string& rule : accept_changes_) {
      if (!Matches(rule, change)) continue;
      spdlog::warn(
          "host {} changed {} -> {}, a change baseline.accept_changes declares planned ({}): the level measured "
          "since becomes the baseline",
          change.field, change.before, change.after, rule);
      return AcceptLevel(now);
    }
  }
}

void ResultModel::AcceptLevel(Moment now) {
  const double since = contents_.host.LatestLevelChangeUnix();
  int armed = 0;
  int recording = 0;
  // A series out of the plan has no recent figures (TrackPlannedSeries): it records.
  for (auto& [key, history] : contents_.series) (history.AcceptLevel(since, now.unix_seconds) ? armed : recording) += 1;
  const std::size_t cleared = contents_.host.changes.size();
  contents_.host.Begin(kOriginAccepted, fingerprint_, topology_signature_, last_host_, Rfc3339(now.unix_seconds));
  const std::string level = since > 0 ? fmt::format("the figures measured since the host change at {}", Rfc3339(since))
                                      : fmt::format("the last {} figures", SeriesHistory::kWindow);
  spdlog::warn(
      "the level is accepted as the new baseline: {} series armed at once at the median of {}; {} series had fewer "
      "than {} such figures and stay disarmed until they have {} ({} host changes cleared)",
      armed, level, recording, SeriesHistory::kWindow, SeriesHistory::kWindow, cleared);
  MarkChanged(true);
}

void ResultModel::Rerecord(const char* origin, Moment now) {
  for (auto& [key, history] : contents_.series) history.Rerecord(now.unix_seconds, /*forget_recent=*/false);
  const std::size_t cleared = contents_.host.changes.size();
  contents_.host.Begin(origin, fingerprint_, topology_signature_, last_host_, Rfc3339(now.unix_seconds));
  spdlog::info("recording a new baseline of every series from its next {} figures ({}; {} host changes cleared)",
               figures_needed_, origin, cleared);
  MarkChanged(true);
}

void ResultModel::CheckRequest(Moment now) {
  const StoredText stored = storage_->Read(kRequestFile);
  if (stored.status == StoredText::Status::kMissing) return;
  if (stored.status == StoredText::Status::kUnreadable) {
    spdlog::error("{}: the operator's request is not acted on", stored.error);
    return;
  }
  std::string error = stored.error;
  const auto request = stored.status == StoredText::Status::kRefused
                           ? std::nullopt
                           : ParseRequest(stored.text, storage_->Where() + "/" + kRequestFile, error);
  if (!request) {
    spdlog::error("{}; it is not acted on", error);
  } else if (request->id == contents_.last_request) {
    // Acted on before, but the file could not be removed (a read-only
    // directory): not acted on again; its removal is tried again below.
  } else {
    if (request->action == "accept") {
      spdlog::warn("the current level is accepted as the new baseline (numaprobe baseline accept)");
      AcceptLevel(now);
    } else {
      spdlog::info("the baseline was reset (numaprobe baseline reset)");
      Rerecord(kOriginReset, now);
    }
    contents_.last_request = request->id;
    Write(now, /*force=*/true);
  }
  RemoveRequest();
}

void ResultModel::RemoveRequest() {
  const std::string removed = storage_->Remove(kRequestFile);
  if (removed.empty()) {
    if (std::exchange(request_removal_pending_, false)) {
      spdlog::info("the operator's request {}/{} is removed", storage_->Where(), kRequestFile);
    }
    return;
  }
  // A failed write like any other: counted, and the metric says so.
  ++write_failures_;
  last_write_ok_ = false;
  if (!std::exchange(request_removal_pending_, true)) {
    spdlog::error("{}; the request is remembered and not acted on again, and its removal retried with every save",
                  removed);
  }
  // Published with the event that acted on the request.
}

void ResultModel::ObserveHost(const HostObservation& host, const RuntimeFacts& runtime, Moment now) {
  last_host_ = host;
  ObserveHostFacts(now);
  AcceptPlannedChanges(now);
  Write(now);
  PublishView([&](Snapshot& s) { s.runtime_facts = runtime; });
}

void ResultModel::ReloadState(Moment now) {
  if (!unreadable_.empty()) {
    const StoredText stored = storage_->Read(kStateFile);
    if (stored.status != StoredText::Status::kUnreadable) {
      spdlog::info(
          "{}/{} can be read again: its state is restored (what was learnt since start in memory only is "
          "replaced by it)",
          storage_->Where(), kStateFile);
      unreadable_.clear();
      Restore(now);
    }
  } else {
    CheckRequest(now);
  }
  Write(now);
  PublishView({});
}

bool ResultModel::Land(const Task& task, const ProbeRun& run, Moment now, const LoopFacts& loop) {
  bool confirm = false;
  if (const std::optional<BaselineValue> figure = task.kind->BaselineOf(*run.record, per_cpu_)) {
    const SeriesKey& key = *figure;
    SeriesHistory& history = contents_.series[key];
    const KindTraits& traits = task.kind->traits();
    confirm = !task.confirmation && traits.confirmation_band &&
              history.NeedsConfirmation(figure->value, *traits.confirmation_band, traits.regression);
    if (const std::optional<int> found = task.kind->FoundThreadsOf(*run.record)) history.SetFoundThreads(*found);
    const bool armed = history.Add(figure->value, now.unix_seconds, figures_needed_);
    if (armed) {
      spdlog::info("{}: baseline armed at {:g} (the median of {} figures)", key.Describe(), history.armed()->value,
                   history.armed()->figures);
    }
    // Saved at the spacing, not at once: a crash before then loses the last
    // figure, and the series arms again at its next one.
    dirty_ = true;
    derived_.Update(key, history);
  }
  // A save the figure makes due is part of this event: written first, so
  // that the one publication says how it went.
  Write(now);
  PublishView([&](Snapshot& s) {
    RecordRun(s, run.record, now.unix_seconds, run.cpu_seconds);
    s.duty_cycle_ratio = loop.duty_cycle_ratio;
    s.probe_lock_wait_seconds = loop.lock_wait_seconds;
    s.probe_lock_holder.reset();
  });
  return confirm;
}

std::optional<int> ResultModel::FoundThreads(const SeriesKey& key) const {
  const auto it = contents_.series.find(key);
  return it == contents_.series.end() ? std::nullopt : it->second.found_threads();
}

std::vector<RecordPtr> ResultModel::PublishedRecords() const {
  const std::shared_ptr<const Snapshot> published = store_.Current();
  std::vector<RecordPtr> records;
  records.reserve(published->figures.size());
  for (const Timed& t : published->figures) records.push_back(t.record);
  return records;
}

void ResultModel::DutyObserved(double ratio) {
  PublishView([&](Snapshot& s) { s.duty_cycle_ratio = ratio; });
}

void ResultModel::LockWaited(double total_seconds, std::optional<ProbeLockHolder> holder) {
  PublishView([&](Snapshot& s) {
    s.probe_lock_wait_seconds = total_seconds;
    s.probe_lock_holder = std::move(holder);
  });
}

void ResultModel::RoundEnded(RefreshOf refresh, int rotation_rounds) {
  const double cycle_seconds = refresh.cycle_seconds;
  refresh_ = std::move(refresh);
  PublishView([&](Snapshot& s) {
    ++s.rounds_completed;
    s.refresh_interval_seconds = cycle_seconds;
    s.rotation_rounds = rotation_rounds;
  });
}

void ResultModel::UseBudget(double ratio) {
  budget_ratio_ = ratio;
  PublishView({});
}

void ResultModel::KeepSchedule(ScheduleMemory schedule, bool urgent) {
  contents_.schedule = std::move(schedule);
  MarkChanged(urgent);
}

bool ResultModel::Recording() const {
  return std::any_of(planned_.begin(), planned_.end(), [&](const SeriesKey& key) {
    return !own_schedule_kinds_.contains(key.probe) && SeriesRecording(key);
  });
}

bool ResultModel::Recording(std::string_view kind) const {
  return std::any_of(planned_.begin(), planned_.end(),
                     [&](const SeriesKey& key) { return key.probe == kind && SeriesRecording(key); });
}

bool ResultModel::SeriesRecording(const SeriesKey& key) const {
  const auto it = contents_.series.find(key);
  return it == contents_.series.end() || !it->second.armed();
}

void ResultModel::MarkChanged(bool urgent) {
  // Anything but a landed figure (which updates its series alone) may touch
  // many series: their derived figures are rebuilt at the next Refresh.
  stale_ = true;
  dirty_ = true;
  urgent_ = urgent_ || urgent;
}

void ResultModel::Save(Moment now, bool force) {
  Write(now, force);
  // Published only when the outcome changes what the snapshot says.
  if (WriteStatus() != published_write_) PublishView({});
}

void ResultModel::Write(Moment now, bool force) {
  if (!dirty_ || !unreadable_.empty()) return;
  // A failed write costs next to nothing: retried sooner.
  const std::int64_t spacing = save_failing_ ? kRetrySpacingNs : save_spacing_ns_;
  if (!force && !urgent_ && last_save_ns_ != 0 && now.monotonic_ns - last_save_ns_ < spacing) return;
  last_save_ns_ = now.monotonic_ns;
  std::string error;
  const std::optional<std::string> text = FormatState(contents_, error);
  if (text) error = storage_->Write(kStateFile, *text);
  if (!error.empty()) {
    ++write_failures_;
    last_write_ok_ = false;
    // Logged once per outage, not once per attempt: the metric counts the rest.
    if (!save_failing_) {
      spdlog::error("cannot save the state ({}); kept in memory, retried every {} s", error,
                    kRetrySpacingNs / 1'000'000'000);
    } else {
      spdlog::debug("still cannot save the state ({})", error);
    }
    save_failing_ = true;
    urgent_ = false;  // retried at the spacing, not at every event
  } else {
    if (save_failing_) {
      spdlog::info("the state file in {} is written again after {} failed attempts", storage_->Where(),
                   write_failures_);
    }
    save_failing_ = false;
    last_write_ok_ = true;
    dirty_ = false;
    urgent_ = false;
    if (request_removal_pending_) RemoveRequest();
  }
}

std::pair<bool, std::uint64_t> ResultModel::WriteStatus() const {
  return {last_write_ok_ && unreadable_.empty(), write_failures_};
}

void ResultModel::PublishView(const std::function<void(Snapshot&)>& also) {
  store_.Update([&](Snapshot& s) {
    if (also) also(s);
    Refresh(s);
  });
  published_write_ = WriteStatus();
}

void ResultModel::Refresh(Snapshot& s) {
  if (stale_) {
    derived_.Rebuild(contents_.series, planned_);
    stale_ = false;
  }
  derived_.Fill(figures_needed_, refresh_, s);
  s.baseline_origin = contents_.host.origin;
  s.host_changes = contents_.host.changes;
  s.memory_errors_since_baseline = contents_.host.errors_since();
  std::tie(s.state_write_successful, s.state_write_failures_total) = WriteStatus();
  // The budget the scheduler last said it uses (UseBudget): a replan does
  // not change it, the scheduler does when it changes its budget.
  s.duty_cycle_budget_ratio = budget_ratio_;
}

}  // namespace numaprobe::daemon
