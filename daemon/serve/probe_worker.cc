// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/probe_worker.h"

#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kernels/thread_start.h"

namespace numaprobe::daemon {

std::string ApplyPriority(ProbePriority priority) {
  sched_param param{};
  if (priority == ProbePriority::kIdle) {
    if (sched_setscheduler(0, SCHED_IDLE, &param) != 0) return std::string("SCHED_IDLE: ") + std::strerror(errno);
    return "";
  }
  if (sched_setscheduler(0, SCHED_BATCH, &param) != 0) return std::string("SCHED_BATCH: ") + std::strerror(errno);
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19) != 0) {
    return std::string("nice 19: ") + std::strerror(errno);
  }
  return "";
}

ProbeWorker::ProbeWorker(ProbePriority priority) : priority_(priority) {}

ProbeWorker::~ProbeWorker() {
  {
    std::lock_guard lock(mu_);
    quit_ = true;
    cv_.notify_all();
  }
  if (!thread_.joinable()) return;
  if (abandoned_) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void ProbeWorker::SetPriority(ProbePriority priority) {
  std::lock_guard lock(mu_);
  priority_ = priority;
  priority_dirty_ = true;
}

std::string ProbeWorker::Submit(std::function<void()> job) {
  if (!thread_.joinable()) {
    auto started = kernels::StartThread("probe worker", [this] { Run(); });
    if (!started.ok()) return started.failure().reason;
    thread_ = std::move(started).value();
  }
  std::lock_guard lock(mu_);
  job_ = std::move(job);
  busy_ = true;
  cv_.notify_all();
  return "";
}

bool ProbeWorker::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return !busy_; });
}

void ProbeWorker::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return quit_ || busy_; });
    if (quit_ && !busy_) return;
    if (priority_dirty_) {
      priority_dirty_ = false;
      if (auto error = ApplyPriority(priority_); !error.empty()) {
        spdlog::warn("cannot lower probe priority ({}); probes run at normal priority", error);
      }
    }
    std::function<void()> job = std::move(job_);
    lock.unlock();
    job();
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace numaprobe::daemon
