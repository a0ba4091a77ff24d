// SPDX-License-Identifier: Apache-2.0
// Starting a thread where the host limits tasks (RLIMIT_NPROC, a cgroup's
// pids.max, a container's pids limit): std::thread throws std::system_error
// (EAGAIN) when the kernel refuses, and a measurement that needs a thread it
// cannot have ends with Outcome::kThreadLimit instead. The caller says why
// (the daemon names the limit in its log); nothing here logs.
#pragma once

#include <atomic>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "kernels/result.h"

namespace numaprobe::kernels {

// A running thread for `body`, or kThreadLimit naming `what` and the error.
template <class Body>
Expected<std::thread> StartThread(const char* what, Body&& body) {
  try {
    return std::thread(std::forward<Body>(body));
  } catch (const std::system_error& e) {
    return Failure{Outcome::kThreadLimit, std::string("cannot create the ") + what + " thread: " + e.what()};
  }
}

// The start gate of a run's measuring threads: none measures before every
// thread of the run exists, so a thread the host refuses (above) ends the run
// before any load is generated. The starter opens the gate once all threads
// exist, or abandons it and joins those already waiting.
enum class StartGate { kClosed, kOpen, kAbandoned };

// Waits (yielding) until `gate` leaves kClosed; true when it was opened.
inline bool AwaitStartGate(const std::atomic<StartGate>& gate) {
  StartGate g;
  while ((g = gate.load(std::memory_order_acquire)) == StartGate::kClosed) std::this_thread::yield();
  return g == StartGate::kOpen;
}

}  // namespace numaprobe::kernels
