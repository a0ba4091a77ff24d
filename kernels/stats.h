// SPDX-License-Identifier: Apache-2.0
// Median, minimum and MAD of a set of samples: the headline is the median
// because single samples are hit by interrupts, refresh and frequency changes.
#pragma once

#include <span>

#include "kernels/result.h"

namespace numaprobe::kernels {

SampleStats Summarize(std::span<const double> samples);

}  // namespace numaprobe::kernels
