// SPDX-License-Identifier: Apache-2.0
// KindTraits: what a probe kind is, as constants. Every ProbeKind hands its
// one traits value to the base constructor (probe_kind.h) and the shared code
// reads it through ProbeKind::traits(); what a kind does with its records,
// its configuration and its flags stays in ProbeKind's methods.
//
// Thread safety: a value, immutable once its kind is constructed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace numaprobe::daemon {

// Which way a kind's figure moves when the machine gets worse: a latency
// rises, a bandwidth falls.
enum class Regression { kHigherIsWorse, kLowerIsWorse };

// The families a kind with a baseline publishes besides its figures, named
// from its figure family `<stem>_<unit>`: the baseline `<stem>_baseline_<unit>`,
// its spread `<stem>_baseline_spread_ratio` and the recent median
// `<stem>_recent_median_<unit>` (web/metrics_baseline.cc).
struct BaselineSeries {
  std::string stem;  // numaprobe_memory_latency
  std::string unit;  // seconds
};

// A Prometheus family a kind publishes; present even without series.
struct FamilySpec {
  std::string name;
  std::string help;
};

// A kind sets its fields by name (designated initializers); every field but
// the title has a default, so the compiler warns about a kind that leaves
// its title out (-Wmissing-field-initializers; an error in every preset,
// which sets NUMAPROBE_WERROR).
struct KindTraits {
  // For people: "memory latency", in logs and table titles.
  std::string_view title;
  // Whether `numaprobe probe` runs it without --tests.
  bool runs_by_default = true;

  // Whether the daemon keeps a baseline (and recent figures) of this kind's
  // series (ProbeKind::SeriesOf, FigureOf), published under these names.
  bool has_baseline = false;
  BaselineSeries baseline_names{};
  // How far a figure may lie from its baseline in the direction of
  // `regression` before the scheduler confirms it with more runs
  // (serve/results/series_history.h), as a positive fraction of the
  // baseline: 0.05 with kHigherIsWorse, a figure more than 5% above is
  // suspicious. None: never confirmed, and no worst drift is published
  // (web/metrics_drift.cc). Needs a baseline.
  std::optional<double> confirmation_band{};
  // Which way is worse: the band's side, and the host's worst drift (the
  // highest or the lowest ratio, serve/results/derived.cc). Read only with
  // a confirmation band.
  Regression regression = Regression::kHigherIsWorse;
  // Whether the peer alert compares this kind's remote/local ratio of recent
  // medians with the same pair on hosts of one cohort (the daemon publishes
  // the ratio, web/metrics_peers.cc). Needs a baseline (recent medians).
  bool compared_with_peers = false;

  // Whether test fault injection may scale its figures
  // (NUMAPROBE_TEST_SCALE_<NAME>, common/test_hooks.h): a kind that says yes
  // multiplies its figures by ProbeSettings::test_scales[name()].
  bool test_scaled = false;

  // Prometheus: the kind's families (ProbeKind::AppendFigures fills them).
  std::vector<FamilySpec> families{};
  // What the kind's figure is, as `numaprobe probe --help` says it after the
  // flags (which statistic, how it compares with other tools); "": nothing.
  std::string_view figure_help{};
};

}  // namespace numaprobe::daemon
