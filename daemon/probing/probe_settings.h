// SPDX-License-Identifier: Apache-2.0
// The settings of a probe run, and the settings a Config implies, shared by
// the daemon and by `numaprobe probe`'s defaults, so the CLI and the daemon
// measure the same way. Each kind keeps its own settings type in its module
// (kinds/kind_settings.h) and fills it from its config section
// (ProbeKind::AddSettings); this holds them without knowing their types.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "daemon/common/typed_values.h"
#include "daemon/config/config.h"
#include "daemon/probing/buffer_pool.h"
#include "daemon/probing/probe_kind.h"
#include "kernels/result.h"

namespace numaprobe::daemon {

struct ProbeSettings {
  // Each kind's own settings type (kinds/kind_settings.h): Of<T>().
  TypedValues kinds;
  template <class T>
  T& Of() {
    return kinds.Of<T>();
  }
  template <class T>
  const T& Of() const {
    return kinds.Of<T>();
  }

  // Test-only fault injection (daemon/common/test_hooks.h, honoured only with
  // NUMAPROBE_TEST_MODE=1): kind name -> factor a kind whose traits are test_scaled
  // multiplies its figures by, so integration tests can raise a regression.
  std::map<std::string, double> test_scales;
  double TestScaleOf(std::string_view kind) const {
    const auto it = test_scales.find(std::string(kind));
    return it == test_scales.end() ? 1 : it->second;
  }
};

// Multiplies every statistic of `stats` by `factor` (test fault injection).
inline void ScaleForTest(kernels::SampleStats& stats, double factor) {
  if (factor == 1) return;
  stats.median *= factor;
  stats.min *= factor;
  stats.max *= factor;
  stats.mad *= factor;
}

// Every kind's settings under `config` (ProbeKind::AddSettings, in table order).
ProbeSettings ProbeSettingsFrom(const Config& config);
// How the published figures of `config` are labelled (probe_kind.h).
FigureContext FigureContextFrom(const Config& config);
BufferSettings BufferSettingsFrom(const Config& config);

}  // namespace numaprobe::daemon
