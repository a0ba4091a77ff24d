// SPDX-License-Identifier: Apache-2.0
// The idle gate of a probe that loads every CPU of a node (peak bandwidth):
// it runs only when those CPUs were idle enough just before, so that it
// neither measures a node shared with a workload (its figure would be the
// workload's leftovers, not the memory system's) nor takes a busy node's
// memory bandwidth from the workload. A closed gate is the run's outcome
// (kernels::Outcome::kSkipped), counted like any other.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace numaprobe::daemon {

// How long the gate looks at the CPUs before a run: 100 /proc/stat ticks per
// CPU, so that one busy tick moves a CPU's share by 1%, well below any
// sensible gate.
inline constexpr std::chrono::milliseconds kIdleGateWindow{1000};

// Why the gate is closed for `cpus` (their mean busy share in `busy`, from
// CpuChooser::SampleBusy over kIdleGateWindow, above `max_busy`), or none when
// it is open. CPUs without a share (counters unreadable) count as idle: the
// gate cannot say no without evidence, and the run's own discards still
// catch a disturbed figure.
std::optional<std::string> IdleGateClosed(const std::map<int, double>& busy, const std::vector<int>& cpus,
                                          double max_busy);

}  // namespace numaprobe::daemon
