// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/probe_executor.h"

#include "daemon/probing/buffer_pool.h"
#include "daemon/probing/probe_runner.h"
#include "daemon/serve/probe_worker.h"
#include "daemon/serve/run_cpu_meter.h"

namespace numaprobe::daemon {

namespace {

namespace k = kernels;

class Worker final : public ProbeExecutor {
 public:
  explicit Worker(ProbePriority priority) : worker_(priority) {}

  void Adopt(const k::Topology& topology, const Config& config, ProbeSettings settings, ProbeLock& lock,
             std::function<void()> on_lock_busy) override {
    lock_ = &lock;
    const BufferSettings buffers = BufferSettingsFrom(config);
    // Prepared buffers cost more CPU than measuring them: keep them unless
    // what they are made of changed.
    if (!pool_ || pool_->settings() != buffers) pool_ = std::make_unique<BufferPool>(buffers);
    runner_ = std::make_unique<ProbeRunner>(topology, *pool_, std::move(settings), lock, std::move(on_lock_busy));
  }

  void SetPriority(ProbePriority priority) override { worker_.SetPriority(priority); }

  void Start(const Task& task, bool ends_visit, const std::atomic<bool>* stop) override {
    // On the heap and shared: an abandoned run may outlive the loop's frame.
    auto run = std::make_shared<ProbeRun>();
    run_ = run;
    const std::string not_started = worker_.Submit([this, run, task, ends_visit, stop] {
      // Everything the run costs: buffer preparation on the worker, and the
      // kernels' measuring threads over their whole lives (run_cpu_meter.h).
      const RunCpuMeter meter = RunCpuMeter::Start();
      const std::int64_t waited_before_ns = lock_->waited_ns();
      run->record = runner_->Run(*task.kind, task.target, stop, task.found_threads, task.published);
      // Freeing the visit's buffers (munmap of up to hundreds of MiB) is
      // part of what the probe costs: on the worker, inside the charge.
      if (ends_visit) runner_->ReleaseBuffers();
      run->lock_wait_seconds = static_cast<double>(lock_->waited_ns() - waited_before_ns) / 1e9;
      run->cpu_seconds = meter.Seconds();
    });
    // No worker thread (a task limit): the run is skipped, counted as
    // thread_limit like any outcome, and Wait returns at once.
    if (!not_started.empty()) run->record = task.kind->NotRun(task.target, k::Outcome::kThreadLimit, not_started);
  }

  bool Wait(std::chrono::milliseconds timeout) override { return worker_.Wait(timeout); }
  ProbeRun Result() override { return *run_; }
  void Abandon() override { worker_.Abandon(); }
  void ReleaseBuffers() override { runner_->ReleaseBuffers(); }

 private:
  ProbeLock* lock_ = nullptr;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<ProbeRunner> runner_;
  std::shared_ptr<ProbeRun> run_;
  ProbeWorker worker_;  // last: destroyed (joined) first
};

}  // namespace

std::unique_ptr<ProbeExecutor> WorkerExecutor(ProbePriority priority) { return std::make_unique<Worker>(priority); }

}  // namespace numaprobe::daemon
