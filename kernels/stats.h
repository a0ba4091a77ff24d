// SPDX-License-Identifier: Apache-2.0
// Median, minimum and MAD of a set of samples: the headline is the median
// because single samples are hit by interrupts, refresh and frequency changes.
#pragma once

#include <optional>
#include <span>

#include "kernels/result.h"

namespace numaprobe::kernels {

SampleStats Summarize(std::span<const double> samples);

// The median of `values`, none if there are none. An even count gives the
// mean of the two middle values ({1, 2, 3, 4} -> 2.5), which is also what
// PromQL's quantile(0.5) computes, so a figure the daemon derives this way
// equals the one an alerting rule computes from the published series. The
// one median of the project: the daemon, the kernels and bench/ use it.
std::optional<double> Median(std::span<const double> values);

}  // namespace numaprobe::kernels
