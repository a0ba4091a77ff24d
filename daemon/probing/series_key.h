// SPDX-License-Identifier: Apache-2.0
// The identity of one measured series: which probe, from which CPU (per-CPU
// mode) or node, on which memory node, which variant (the bandwidth op). Every
// place that keeps something per series (recent figures, baselines, the state
// file, the drift and peer figures) keys it by this one type.
//
// Thread safety: a value.
#pragma once

#include <compare>
#include <string>
#include <tuple>

#include <fmt/format.h>

namespace numaprobe::daemon {

struct SeriesKey {
  std::string probe;  // the kind's name
  int cpu = -1;       // -1 unless per-CPU mode
  int cpu_node = -1;
  int mem_node = -1;
  std::string op;  // the target's variant ("" if none)

  // Numeric order (node 2 before node 10), by kind, pair, CPU and op: the
  // order the state file and the metrics list series in.
  friend auto operator<=>(const SeriesKey& a, const SeriesKey& b) {
    return std::tie(a.probe, a.cpu_node, a.mem_node, a.cpu, a.op) <=>
           std::tie(b.probe, b.cpu_node, b.mem_node, b.cpu, b.op);
  }
  friend bool operator==(const SeriesKey&, const SeriesKey&) = default;

  // The series as a log line names it: "latency cpu_node=0 mem_node=1 op=read cpu=3".
  std::string Describe() const {
    std::string text = fmt::format("{} cpu_node={} mem_node={}", probe, cpu_node, mem_node);
    if (!op.empty()) text += " op=" + op;
    if (cpu >= 0) text += fmt::format(" cpu={}", cpu);
    return text;
  }
};

}  // namespace numaprobe::daemon
