// SPDX-License-Identifier: Apache-2.0
// A standalone SVG line chart, as one string: for `numaprobe probe --tests
// loaded_latency`, which writes the latency-vs-bandwidth curves to a file.
//
// A pure function of its arguments (no I/O, no clock, no locale): the same
// input gives byte-identical output, so it is testable and diffable. Written by
// hand because Debian 12 has no maintained C++ library that renders a chart to
// an SVG string without a runtime gnuplot (gnuplot-iostream, sciplot), Qt
// (qcustomplot) or a device/file model (plplot, GNU libplot). Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "daemon/probing/probe_kind.h"  // PlotSeries: kinds hand their curves over as such

namespace numaprobe::daemon {

struct PlotOptions {
  std::string title = "Loaded latency";
  std::string x_label = "Load bandwidth (GB/s)";
  std::string y_label = "Latency (ns)";
  int width = 840;   // pixels, clamped to [480, 4000]
  int height = 460;  // clamped to [240, 4000]
};

// Axes with "nice" ticks (1, 2 or 5 x 10^k) starting at 0, so a slope is
// never exaggerated by a cropped axis; a legend with one entry per series;
// every text escaped for XML. No series (or no finite point) gives the axes
// and a "no data" note.
std::string RenderSvgPlot(const std::vector<PlotSeries>& series, const PlotOptions& options = {});

}  // namespace numaprobe::daemon
