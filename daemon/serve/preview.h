// SPDX-License-Identifier: Apache-2.0
// The sizing preview: what the daemon will do on a host with a configuration
// (`numaprobe topology --config.file FILE`), found by running the real
// scheduler loop and results model on a simulated clock (simulation.h) with
// given task costs, through a first start, the baselines arming, and a
// restart. The durations are the schedule's, at those costs: a host where
// probes cost more (remote pairs on real hardware take longer than on the
// node the costs were measured on) takes longer in proportion.
//
// Thread safety: one preview at a time per call; it runs the loop on a thread
// of its own and joins it.
#pragma once

#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/serve/simulation.h"
#include "daemon/serve/task_cost_estimate.h"
#include "kernels/result.h"

namespace numaprobe::daemon {

struct SchedulePreview {
  int series = 0;                    // series with a baseline (the drift alerts' inputs)
  int representatives = 0;           // tasks run every round
  int tasks = 0;                     // tasks of a full round
  double learning_budget_ratio = 0;  // while series record their baseline
  double budget_ratio = 0;           // once every series is armed (schedule.duty_cycle)
  // Once every series is armed, watched over two cycles (at least 4 h):
  int rotation_rounds = 1;
  double round_seconds = 0;                    // the mean round
  double representatives_refresh_seconds = 0;  // the median of their median gaps between figures
  double every_pair_refresh_seconds = 0;       // the longest median gap of any series: a cycle
  double steady_cpu_seconds_per_hour = 0;
  double cycle_cpu_seconds = 0;     // probe CPU of one cycle (every pair once)
  double cpu_seconds_per_hour = 0;  // the most in any whole hour of the simulation
  // From a first start (0 = never within the simulated horizon: see `complete`):
  double ready_seconds = 0;                  // /-/ready: every representative ran
  double armed_representatives_seconds = 0;  // every representative series armed
  double armed_every_pair_seconds = 0;       // every series armed
  // From a restart once every series is armed: ready again, and every series
  // measured again (its drift was checked against the restored baseline and
  // recent figures throughout).
  double ready_after_restart_seconds = 0;
  double rearmed_after_restart_seconds = 0;
  bool complete = true;  // every duration above was reached within the horizon
  std::vector<std::string> assumptions;
};

// `topology` and `restriction`: the host as planned (a described topology is
// planned with everything allowed). `horizon_seconds` bounds each phase.
// How far `numaprobe topology` and `check-config` look: past this a schedule
// is not worth calling one.
inline constexpr double kPreviewHorizonSeconds = 14 * 24 * 3600.0;

// A preview's duration for people: "45 s", "82 min", "3.5 h", or "not within
// the horizon" for 0.
std::string PreviewDuration(double seconds);

kernels::Expected<SchedulePreview> PreviewSchedule(const Config& config, SimulatedHost::TopologySource topology,
                                                   const kernels::Restriction& restriction,
                                                   const TaskCostEstimate& costs, double horizon_seconds);

}  // namespace numaprobe::daemon
