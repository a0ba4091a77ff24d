// SPDX-License-Identifier: Apache-2.0
// "[3/12] latency cpu 1 -> node 0" on stderr, but only once a run has taken
// longer than a second: quick runs stay quiet, long ones show they are alive.
#pragma once

#include <cstdint>
#include <string>

namespace numaprobe::daemon {

class Progress {
 public:
  explicit Progress(int total);
  ~Progress();  // ends the line if anything was printed
  void Step(const std::string& what);

 private:
  int total_;
  int done_ = 0;
  std::int64_t start_ns_;
  bool tty_;
  bool printed_ = false;
};

}  // namespace numaprobe::daemon
