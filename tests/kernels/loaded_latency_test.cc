// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/loaded_latency.cc and loaded_latency_run.cc.
//
// The test machines share their CPUs with builds, so no latency figure is
// asserted. What is asserted is structure, exact byte accounting, and one piece
// of physics that holds by a wide margin on any machine and fails if the delay
// is not injected: a 6400 ns pause per KiB caps a thread at 0.16 GB/s.
#include "kernels/loaded_latency.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/kernels/allowed_cpus.h"
#include "tests/kernels/numa_syscalls.h"

#include "kernels/pin.h"
#include "tests/byte_sizes.h"

namespace numaprobe::kernels {
namespace {

using ::testing::HasSubstr;

class LoadedLatencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
    cpus_ = AllowedCpus();
    auto chase = LatencyBuffer::Create({.mem_node = 0, .bytes = 32 * kMiB});
    ASSERT_TRUE(chase.ok()) << chase.failure().reason;
    auto load = BandwidthBuffer::Create({.mem_node = 0, .bytes = 64 * kMiB});
    ASSERT_TRUE(load.ok()) << load.failure().reason;
    chase_.emplace(std::move(chase).value());
    load_.emplace(std::move(load).value());
  }

  // One chase CPU and one load CPU, short points, and many retries: a
  // disturbed sample is discarded and retried, never measured.
  LoadedLatencySpec Spec(std::vector<std::uint32_t> delays) const {
    LoadedLatencySpec spec;
    spec.chase_cpu = cpus_.size() > 0 ? cpus_[0] : 0;
    spec.load_cpus = {cpus_.size() > 1 ? cpus_[1] : 1};
    spec.mem_node = 0;
    spec.delays_ns = std::move(delays);
    spec.samples = 3;
    spec.loads_per_sample = 5'000;
    spec.settle_loads = 5'000;
    spec.max_attempts = 300;
    spec.point_timeout = std::chrono::milliseconds(5000);
    return spec;
  }

  LoadedLatencyResult Run(const LoadedLatencySpec& spec) { return MeasureLoadedLatency(*chase_, *load_, spec); }

  std::vector<int> cpus_;
  std::optional<LatencyBuffer> chase_;
  std::optional<BandwidthBuffer> load_;
};

// `disturbed` is accepted only with the evidence that the machine was busy:
// discarded samples, counted by reason.
void ExpectOkOrBusy(const LoadedLatencyResult& r) {
  ASSERT_TRUE(r.outcome == Outcome::kOk || r.outcome == Outcome::kDisturbed)
      << OutcomeName(r.outcome) << ": " << r.reason;
  std::vector<LoadedLatencyPoint> all = r.points;
  all.push_back(r.reference);
  for (const LoadedLatencyPoint& p : all) {
    if (p.outcome == Outcome::kOk) continue;
    EXPECT_EQ(p.outcome, Outcome::kDisturbed) << p.reason;
    EXPECT_GT(p.discards.total() + p.load_discards.total(), 0u)
        << "delay " << p.delay_ns << " ns is 'disturbed' without a single discarded sample, so the "
        << "machine was not busy and the kernel is at fault: " << p.reason;
  }
}

TEST_F(LoadedLatencyTest, OnePointPerDelayFromVerifiedBuffers) {
  if (cpus_.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs, have " << cpus_.size();
  for (const LoadTraffic traffic : {LoadTraffic::kRead, LoadTraffic::kReadNtWrite2To1}) {
    LoadedLatencySpec spec = Spec({0, 400, 6400});
    spec.traffic = traffic;
    const LoadedLatencyResult r = Run(spec);
    SCOPED_TRACE(std::string(LoadTrafficName(traffic)));
    ExpectOkOrBusy(r);
    EXPECT_EQ(r.chase_cpu, spec.chase_cpu);
    EXPECT_EQ(r.load_cpus, spec.load_cpus);
    EXPECT_EQ(r.traffic, traffic);
    EXPECT_EQ(r.mem_node, 0);
    EXPECT_EQ(r.chase_buffer.node, 0);
    EXPECT_EQ(r.load_buffer.node, 0);
    EXPECT_TRUE(r.chase_buffer.placement.verified());
    EXPECT_TRUE(r.load_buffer.placement.verified());
    ASSERT_EQ(r.spins_per_ns.size(), 1u);
    EXPECT_GT(r.spins_per_ns[0], 0);
    EXPECT_GT(r.cpu_seconds, 0);
    ASSERT_EQ(r.points.size(), spec.delays_ns.size());
    // The reference point: same threads and handshake, no traffic at all.
    EXPECT_EQ(r.reference.delay_ns, kNoTrafficDelay);
    EXPECT_EQ(r.reference.load_bytes, 0u);
    if (r.reference.outcome == Outcome::kOk) {
      EXPECT_EQ(r.reference.seconds_per_load.n, 3u);
      EXPECT_GT(r.reference.seconds_per_load.median, 0);
      EXPECT_EQ(r.reference.load_bytes_per_second.median, 0) << "the no-traffic point moved memory";
    }
    // Every byte counted comes from whole units: 1 KiB read, or 2 KiB read + 1 KiB written.
    const std::uint64_t unit = traffic == LoadTraffic::kRead ? 1024 : 3072;
    for (std::size_t i = 0; i < r.points.size(); ++i) {
      const LoadedLatencyPoint& p = r.points[i];
      EXPECT_EQ(p.delay_ns, spec.delays_ns[i]);
      if (p.outcome != Outcome::kOk) {
        EXPECT_EQ(p.seconds_per_load.n, 0u);
        EXPECT_EQ(p.load_bytes, 0u);
        continue;
      }
      EXPECT_EQ(p.reason, "");
      EXPECT_EQ(p.seconds_per_load.n, 3u);
      EXPECT_EQ(p.load_bytes_per_second.n, 3u);
      EXPECT_GT(p.seconds_per_load.median, 0);
      EXPECT_LE(p.seconds_per_load.min, p.seconds_per_load.median);
      EXPECT_GT(p.load_bytes, 0u) << "the load thread moved nothing during the samples";
      EXPECT_EQ(p.load_bytes % unit, 0u);
      EXPECT_GT(p.load_bytes_per_second.median, 0);
    }
  }
}

// Chase samples timed by a clock stepping 1 s span no step at all: every
// point, the reference too, says so instead of publishing a figure, and the
// run is coarse_clock even if a busy moment disturbed another point.
TEST_F(LoadedLatencyTest, CoarseClockIsReportedPerPointAndForTheRun) {
  if (cpus_.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs, have " << cpus_.size();
  LoadedLatencySpec spec = Spec({0, 6400});
  spec.clock_step_ns = 1'000'000'000;
  const LoadedLatencyResult r = Run(spec);
  ASSERT_EQ(r.outcome, Outcome::kCoarseClock) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("timed too coarsely"));
  EXPECT_DOUBLE_EQ(r.clock.resolution_seconds, 1.0);
  std::vector<LoadedLatencyPoint> all = r.points;
  all.push_back(r.reference);
  int coarse = 0;
  for (const LoadedLatencyPoint& p : all) {
    EXPECT_NE(p.outcome, Outcome::kOk) << "delay " << p.delay_ns;
    EXPECT_EQ(p.seconds_per_load.n, 0u);
    EXPECT_EQ(p.load_bytes, 0u);
    if (p.outcome == Outcome::kCoarseClock) {
      ++coarse;
      EXPECT_THAT(p.reason, HasSubstr("fewer than the 100"));
    } else {
      EXPECT_EQ(p.outcome, Outcome::kDisturbed) << p.reason;
      EXPECT_GT(p.discards.total() + p.load_discards.total(), 0u) << p.reason;
    }
  }
  EXPECT_GT(coarse, 0);
}

TEST_F(LoadedLatencyTest, InjectedDelayLowersTheLoadBandwidth) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "sanitizers instrument every vector load: bandwidth is not meaningful";
#endif
  if (cpus_.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs, have " << cpus_.size();
  for (const LoadTraffic traffic : {LoadTraffic::kRead, LoadTraffic::kReadNtWrite2To1}) {
    LoadedLatencySpec spec = Spec({0, 6400});
    spec.traffic = traffic;
    spec.reference_point = false;
    const LoadedLatencyResult r = Run(spec);
    SCOPED_TRACE(std::string(LoadTrafficName(traffic)));
    ExpectOkOrBusy(r);
    EXPECT_EQ(r.reference.seconds_per_load.n, 0u) << "no reference point was asked for";
    ASSERT_EQ(r.points.size(), 2u);
    const LoadedLatencyPoint& flat_out = r.points[0];
    const LoadedLatencyPoint& paced = r.points[1];
    if (flat_out.outcome != Outcome::kOk || paced.outcome != Outcome::kOk) continue;  // busy: explained above
    const double unit = traffic == LoadTraffic::kRead ? 1024 : 3072;
    // A unit then >= 6400 ns of spinning: at most unit / 6400 ns, with 4x
    // slack. The spin count is calibrated once, at the start of the run, as
    // the fastest of a few tries; a core clocking up afterwards, or a
    // virtual CPU slowed (stolen) through every try, then spins faster than
    // calibrated. On a 2-vCPU virtual machine the paced read came out
    // at 2.16x (345 MB/s against 160) in a CI run with nothing else
    // running. What the kernel reports is the measured load bandwidth, not
    // the nominal delay, so a shorter delay gives no wrong figure; this
    // bound checks the delay is of the size asked, and the flat-out
    // comparison below that it was injected at all.
    EXPECT_LT(paced.load_bytes_per_second.median, 4 * unit / 6400e-9) << "the delay was far shorter than asked";
    // Flat out moves far more; 2x is a floor any machine clears many times over.
    EXPECT_GT(flat_out.load_bytes_per_second.median, 2 * paced.load_bytes_per_second.median);
  }
}

// Pins itself to `cpu` and spins until destroyed: a competitor the load
// thread must share its CPU with.
class CpuHog {
 public:
  explicit CpuHog(int cpu)
      : thread_([this, cpu] {
          state_ = PinCurrentThread(cpu).empty() ? kPinned : kFailed;
          while (!stop_.load(std::memory_order_relaxed)) {
          }
        }) {}
  ~CpuHog() {
    stop_ = true;
    thread_.join();
  }
  // Waits (a busy machine may not run the new thread at once) until pinned.
  bool AwaitPinned() const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (state_ == kStarting && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return state_ == kPinned;
  }

 private:
  enum State { kStarting, kPinned, kFailed };
  std::atomic<bool> stop_{false};
  std::atomic<State> state_{kStarting};
  std::thread thread_;
};

TEST_F(LoadedLatencyTest, SamplesDuringWhichALoadThreadWasSwitchedOutAreDiscarded) {
  if (cpus_.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs, have " << cpus_.size();
  LoadedLatencySpec spec = Spec({0});
  // Samples of 3-7 ms against scheduler slices of a few ms: a sample can fit
  // in the load thread's slice (the handshake waits for it to run), but of 5
  // or more attempts some straddle a switch, which only the load thread's own
  // getrusage() can see. (On a 2-CPU test VM every attempt did.)
  spec.samples = 5;
  spec.loads_per_sample = 40'000;
  spec.max_attempts = 10;
  // Wait for a switched-out load thread rather than count a timeout: the
  // point here is the getrusage() check, not the answer deadline.
  spec.answer_timeout = std::chrono::milliseconds(2000);
  spec.reference_point = false;
  std::optional<LoadedLatencyResult> r;
  {
    CpuHog hog(spec.load_cpus[0]);
    ASSERT_TRUE(hog.AwaitPinned());
    r = Run(spec);
  }
  ExpectOkOrBusy(*r);
  std::uint64_t switched = 0;
  for (const LoadedLatencyPoint& p : r->points) switched += p.load_discards.context_switch;
  EXPECT_GT(switched, 0u) << "the load thread shared its CPU with a spinning thread for the whole "
                             "sweep, yet no sample was discarded for its context switches";
}

TEST_F(LoadedLatencyTest, BadSpecsAreRejectedByName) {
  struct Case {
    const char* what;
    void (*edit)(LoadedLatencySpec&);
    const char* reason;
  };
  const Case cases[] = {
      {"no load cpus", [](LoadedLatencySpec& s) { s.load_cpus.clear(); }, "no load cpu"},
      {"chase among load", [](LoadedLatencySpec& s) { s.load_cpus = {s.chase_cpu}; }, "is also a load cpu"},
      {"duplicate load cpu",
       [](LoadedLatencySpec& s) {
         s.load_cpus = {3, 3};
       },
       "load cpu 3 listed twice"},
      {"negative cpu", [](LoadedLatencySpec& s) { s.chase_cpu = -1; }, "chase cpu -1"},
      {"empty delays", [](LoadedLatencySpec& s) { s.delays_ns.clear(); }, "no injection delay"},
      {"huge delay",
       [](LoadedLatencySpec& s) {
         s.delays_ns = {0, 5'000'000};
       },
       "5000000 ns"},
      {"node not the buffers'", [](LoadedLatencySpec& s) { s.mem_node = 7; }, "memory node 7 requested"},
      {"no node", [](LoadedLatencySpec& s) { s.mem_node = -1; }, "memory node -1"},
      {"no samples", [](LoadedLatencySpec& s) { s.samples = 0; }, "samples"},
      {"too many threads",  // 64 MiB split 65 ways
       [](LoadedLatencySpec& s) {
         s.load_cpus.resize(65);
         std::iota(s.load_cpus.begin(), s.load_cpus.end(), s.chase_cpu + 1);
       },
       "less than 1 MiB"},
  };
  for (const Case& c : cases) {
    LoadedLatencySpec spec = Spec({0, 100});
    c.edit(spec);
    const auto start = std::chrono::steady_clock::now();
    const LoadedLatencyResult r = Run(spec);
    EXPECT_EQ(r.outcome, Outcome::kInvalidSpec) << c.what << ": " << r.reason;
    EXPECT_THAT(r.reason, HasSubstr(c.reason)) << c.what;
    EXPECT_TRUE(r.points.empty()) << c.what;
    EXPECT_EQ(r.cpu_seconds, 0) << c.what << ": no thread may run for a rejected spec";
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100)) << c.what;
  }
}

TEST_F(LoadedLatencyTest, UnknownNodeFailsAtBufferCreationNamingIt) {
  auto load = BandwidthBuffer::Create({.mem_node = 4095, .bytes = 2 * kMiB});
  ASSERT_FALSE(load.ok());
  EXPECT_THAT(load.failure().reason, HasSubstr("node 4095"));
  auto chase = LatencyBuffer::Create({.mem_node = 4095, .bytes = 2 * kMiB});
  ASSERT_FALSE(chase.ok());
  EXPECT_THAT(chase.failure().reason, HasSubstr("node 4095"));
}

TEST_F(LoadedLatencyTest, PinFailureNamesTheCpuAndJoinsEveryThread) {
  LoadedLatencySpec spec = Spec({0});
  spec.load_cpus = {4095};
  LoadedLatencyResult r = Run(spec);
  EXPECT_EQ(r.outcome, Outcome::kPinFailed);
  EXPECT_THAT(r.reason, HasSubstr("load cpu 4095"));
  EXPECT_TRUE(r.points.empty());

  spec = Spec({0});
  spec.chase_cpu = 4095;
  r = Run(spec);
  EXPECT_EQ(r.outcome, Outcome::kPinFailed);
  EXPECT_THAT(r.reason, HasSubstr("chase cpu 4095"));
  EXPECT_TRUE(r.points.empty());
}

TEST_F(LoadedLatencyTest, StopFlagIsHonouredQuickly) {
  if (cpus_.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs, have " << cpus_.size();
  std::atomic<bool> stop{true};
  LoadedLatencySpec spec = Spec({0, 100});
  spec.stop = &stop;
  LoadedLatencyResult r = Run(spec);
  EXPECT_EQ(r.outcome, Outcome::kCancelled) << r.reason;
  EXPECT_TRUE(r.points.empty());

  // Raised mid-sweep: a sweep that would run for minutes ends, every thread
  // joined, within a second of the request (the daemon's SIGTERM promise).
  stop = false;
  spec.delays_ns.assign(200, 0);
  spec.samples = 1000;
  spec.max_attempts = 100'000;
  spec.point_timeout = std::chrono::milliseconds(60'000);
  std::chrono::steady_clock::time_point raised;
  std::thread stopper([&stop, &raised] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    raised = std::chrono::steady_clock::now();
    stop = true;
  });
  r = Run(spec);
  const auto returned = std::chrono::steady_clock::now();
  stopper.join();
  EXPECT_EQ(r.outcome, Outcome::kCancelled) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("stop requested"));
  EXPECT_LT(r.points.size(), spec.delays_ns.size());
  EXPECT_LT(returned - raised, std::chrono::seconds(1));
}

TEST(LoadedLatencyNamesTest, TrafficNamesAndDefaultSweep) {
  EXPECT_EQ(LoadTrafficName(LoadTraffic::kRead), "read");
  EXPECT_EQ(LoadTrafficName(LoadTraffic::kReadNtWrite2To1), "read2-ntwrite1");
  const std::vector<std::uint32_t> delays = DefaultInjectionDelaysNs();
  ASSERT_FALSE(delays.empty());
  EXPECT_EQ(delays.front(), 0u);  // saturation first
  EXPECT_TRUE(std::is_sorted(delays.begin(), delays.end()));
  EXPECT_EQ(LoadedLatencySpec{}.delays_ns, delays);
}

}  // namespace
}  // namespace numaprobe::kernels
