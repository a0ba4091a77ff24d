// SPDX-License-Identifier: Apache-2.0
// Which measurement settings changed between the ones a kind's baselines were
// recorded with (the state file's) and a configuration's: what makes its
// series record new baselines. The daemon logs it when it adopts a
// configuration (ResultModel); `numaprobe check-config` says it before a
// reload, so that an operator knows what a change will disarm.
//
// Settings are the texts of MeasurementSettingsByKind (result_model.h):
// "key=value;key=value", compared key by key.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace numaprobe::daemon {

struct SettingsChange {
  std::string kind;
  // "latency.buffer 16777216 -> 33554432", one per key whose value differs
  // (a key only one side has shows "(none)" on the other).
  std::vector<std::string> keys;
  std::string Describe() const;  // "latency.buffer 16777216 -> 33554432, memory.pages auto -> huge"
};

// The kinds of `now` whose settings differ from `recorded`; a kind `recorded`
// does not hold is left out (its series have no baseline to lose).
std::vector<SettingsChange> SettingsChanges(const std::map<std::string, std::string>& recorded,
                                            const std::map<std::string, std::string>& now);

}  // namespace numaprobe::daemon
