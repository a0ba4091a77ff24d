// SPDX-License-Identifier: Apache-2.0
#include "daemon/cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include "kernels/clock.h"

namespace numaprobe::daemon {

namespace {
constexpr std::int64_t kQuietNs = 1'000'000'000;
}

Progress::Progress(int total) : total_(total), start_ns_(kernels::MonotonicNs()), tty_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (printed_ && tty_) fmt::print(stderr, "\n");
}

void Progress::Step(const std::string& what) {
  ++done_;
  if (kernels::MonotonicNs() - start_ns_ < kQuietNs) return;
  printed_ = true;
  // On a terminal one line is rewritten in place; in a log each step is a line.
  fmt::print(stderr, fmt::runtime(tty_ ? "\r\033[K[{}/{}] {}" : "[{}/{}] {}\n"), done_, total_, what);
}

}  // namespace numaprobe::daemon
