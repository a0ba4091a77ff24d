// SPDX-License-Identifier: Apache-2.0
#include "daemon/cli/baseline_impact.h"

#include <fmt/format.h>

#include <algorithm>

#include "daemon/serve/preview.h"
#include "daemon/serve/results/result_model.h"
#include "daemon/serve/results/settings_change.h"
#include "daemon/serve/results/state_file.h"
#include "daemon/serve/state.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

namespace k = kernels;

namespace {

// The preview's arming times at the learnt costs, or why there are none. The
// preview starts from nothing recorded: a kind's series arm on the same
// schedule when they alone re-record, since the learning budget and the
// rotation are the same.
std::string HowLong(const Config& config, const TaskCostEstimate& costs) {
  if (costs.ToJson().empty()) {
    return "the daemon has not learnt its task costs yet: `numaprobe topology --config.file FILE` previews how long";
  }
  auto topology = k::Topology::FromHost();
  if (!topology.ok()) return "no preview: cannot read the topology: " + topology.failure().reason;
  const k::Restriction restriction = topology->described_by.empty() ? k::Restriction::FromProcess() : k::Restriction{};
  const k::Topology host = topology.value();
  auto preview = PreviewSchedule(
      config, [host](const k::Restriction&) { return k::Expected<k::Topology>(host); }, restriction, costs,
      kPreviewHorizonSeconds);
  if (!preview.ok()) return "no preview: " + preview.failure().reason;
  return fmt::format(
      "armed again: the representatives after {}, every pair after {} (the sizing preview at the task costs the "
      "daemon learnt)",
      PreviewDuration(preview->armed_representatives_seconds), PreviewDuration(preview->armed_every_pair_seconds));
}

}  // namespace

std::vector<std::string> BaselineImpact(const Config& config) {
  const StoredText stored = ReadStateFile(config.state_directory, kStateFile);
  if (stored.status != StoredText::Status::kOk) return {};
  const LoadedState state = ParseState(stored.text, config.state_directory + "/" + kStateFile);
  if (!state.contents) return {};
  const StateContents& contents = *state.contents;
  std::vector<std::string> lines;
  for (const SettingsChange& change : SettingsChanges(contents.settings, MeasurementSettingsByKind(config))) {
    const auto series = std::count_if(contents.series.begin(), contents.series.end(),
                                      [&](const auto& entry) { return entry.first.probe == change.kind; });
    if (series == 0) continue;
    lines.push_back(fmt::format(
        "{} re-records its baselines ({}): its {} series raise no drift alert until each has {} new figures",
        change.kind, change.Describe(), series, config.baseline.rounds));
  }
  if (!lines.empty()) lines.push_back(HowLong(config, contents.schedule.costs));
  return lines;
}

}  // namespace numaprobe::daemon
