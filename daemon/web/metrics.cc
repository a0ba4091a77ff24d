// Measured figures and the baseline. Values are converted to base units here
// and nowhere else: the kernels already report seconds and bytes per second.
#include "daemon/web/metrics.h"

#include <prometheus/text_serializer.h>

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "daemon/web/family_builder.h"
#include "kernels/bandwidth.h"
#include "kernels/clock.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::map<std::string, std::string>;

// Every figure is cached; the Prometheus guidelines ask HELP to say so.
constexpr const char* kCached = ". From the last scheduled probe, not measured at scrape time.";

// Labels of a (CPU, memory node) pair. `cpu` < 0: not in per-CPU mode.
Labels PairLabels(int cpu_node, int mem_node, int cpu) {
  Labels labels{{"cpu_node", Id(cpu_node)}, {"mem_node", Id(mem_node)}};
  if (cpu >= 0) labels["cpu"] = Id(cpu);
  return labels;
}

// (cpu or -1, cpu_node, mem_node): how a latency series is identified.
using PairKey = std::tuple<int, int, int>;

// The newest successful latency result per series. The Snapshot holds one per
// planned pair already; choosing here keeps the ratio and the figures it is
// computed from consistent even if a plan ever repeats a pair.
std::map<PairKey, const Timed<LatencyRecord>*> LatestLatency(const Snapshot& s) {
  std::map<PairKey, const Timed<LatencyRecord>*> latest;
  for (const Timed<LatencyRecord>& t : s.latency) {
    if (t.record.result.outcome != k::Outcome::kOk) continue;
    const MemoryPair& p = t.record.pair;
    const PairKey key{s.per_cpu ? p.cpu : -1, p.cpu_node, p.mem_node};
    auto [it, inserted] = latest.try_emplace(key, &t);
    if (!inserted && t.unix_seconds > it->second->unix_seconds) it->second = &t;
  }
  return latest;
}

void AppendLatency(const Snapshot& s, std::vector<MetricFamily>& out) {
  const std::string what = " of a dependent pointer chase from a CPU of cpu_node to memory on mem_node";
  FamilyBuilder median("numaprobe_memory_latency_seconds", "Median load-to-use memory latency" + what + kCached,
                       MetricType::Gauge);
  FamilyBuilder spread("numaprobe_memory_latency_spread_seconds",
                       "Median absolute deviation of the memory latency samples" + what + kCached,
                       MetricType::Gauge);
  FamilyBuilder fastest("numaprobe_memory_latency_min_seconds",
                        "Fastest memory latency sample" + what + kCached, MetricType::Gauge);
  FamilyBuilder ratio("numaprobe_memory_latency_remote_local_ratio",
                      std::string("Memory latency from cpu_node to mem_node divided by the latency from cpu_node "
                                  "to its own memory (1 for the local pair)") +
                          kCached,
                      MetricType::Gauge);

  const auto latest = LatestLatency(s);
  for (const auto& [key, timed] : latest) {
    const auto& [cpu, cpu_node, mem_node] = key;
    const k::SampleStats& stats = timed->record.result.seconds_per_load;
    const Labels labels = PairLabels(cpu_node, mem_node, cpu);
    median.Add(labels, stats.median);
    spread.Add(labels, stats.mad);
    fastest.Add(labels, stats.min);
    // Only against a measured local pair: a CPU-only node has no local memory,
    // and a ratio against a guessed reference would look like a measurement.
    const auto local = latest.find(PairKey{cpu, cpu_node, cpu_node});
    if (local == latest.end()) continue;
    const double local_seconds = local->second->record.result.seconds_per_load.median;
    if (local_seconds > 0) ratio.Add(labels, mem_node == cpu_node ? 1.0 : stats.median / local_seconds);
  }
  out.push_back(median.Build());
  out.push_back(spread.Build());
  out.push_back(fastest.Build());
  out.push_back(ratio.Build());
}

// `threads` only when more than one thread is configured, so single-thread
// hosts keep the plain {cpu_node,mem_node,op} series the issue specifies.
Labels BandwidthLabels(const Snapshot& s, int cpu_node, int mem_node, int cpu, const std::string& op,
                       std::size_t threads) {
  Labels labels = PairLabels(cpu_node, mem_node, s.per_cpu ? cpu : -1);
  labels["op"] = op;
  if (s.bandwidth_threads > 1) labels["threads"] = std::to_string(threads);
  return labels;
}

void AppendBandwidth(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder bandwidth("numaprobe_memory_bandwidth_bytes_per_second",
                          std::string("Median memory bandwidth from CPUs of cpu_node to memory on mem_node by op "
                                      "(read, write, copy; copy counts bytes read plus bytes written); a threads "
                                      "label, present when more than one thread is configured, counts the threads "
                                      "that ran") +
                              kCached,
                          MetricType::Gauge);
  for (const Timed<BandwidthRecord>& t : s.bandwidth) {
    const k::BandwidthResult& r = t.record.result;
    if (r.outcome != k::Outcome::kOk) continue;
    // The threads that actually ran: a node with fewer CPUs than configured
    // runs fewer, and the label must not claim more.
    const std::size_t threads = r.cpus.empty() ? static_cast<std::size_t>(s.bandwidth_threads) : r.cpus.size();
    const MemoryPair& p = t.record.pair;
    bandwidth.Add(BandwidthLabels(s, p.cpu_node, p.mem_node, p.cpu, std::string(k::BandwidthOpName(r.op)), threads),
                  r.bytes_per_second.median, t.unix_seconds);
  }
  out.push_back(bandwidth.Build());
}

void AppendCoreToCore(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder c2c("numaprobe_core_to_core_latency_seconds",
                    std::string("Median one-way cache-line transfer latency between cpu_a and cpu_b with the line "
                                "homed on line_node; relation is smt, same_llc, same_node or cross_node") +
                        kCached,
                    MetricType::Gauge);
  for (const Timed<C2cRecord>& t : s.c2c) {
    if (t.record.result.outcome != k::Outcome::kOk) continue;
    const C2cPair& p = t.record.pair;
    c2c.Add({{"cpu_a", Id(p.cpu_a)},
             {"cpu_b", Id(p.cpu_b)},
             {"line_node", Id(p.line_node)},
             {"relation", std::string(k::CpuRelationName(p.relation))}},
            t.record.result.one_way_seconds.median, t.unix_seconds);
  }
  out.push_back(c2c.Build());
}

void AppendDistance(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder distance("numaprobe_numa_distance",
                         "Firmware (ACPI SLIT) distance from cpu_node to mem_node, 10 for local, as read when the "
                         "probes were planned.",
                         MetricType::Gauge);
  for (const auto& [pair, value] : s.distances) {
    distance.Add(PairLabels(pair.first, pair.second, -1), value);
  }
  out.push_back(distance.Build());
}

}  // namespace

void AppendMeasurementFamilies(const Snapshot& snapshot, std::vector<MetricFamily>& out) {
  AppendLatency(snapshot, out);
  AppendBandwidth(snapshot, out);
  AppendCoreToCore(snapshot, out);
  AppendDistance(snapshot, out);
  AppendBaselineFamilies(snapshot, out);
}

std::vector<MetricFamily> BuildFamilies(const Snapshot& snapshot) {
  std::vector<MetricFamily> families;
  AppendMeasurementFamilies(snapshot, families);
  AppendHealthFamilies(snapshot, families);
  return families;
}

namespace {
std::string Serialize(const std::vector<MetricFamily>& families) {
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, families);
  return text.str();
}
}  // namespace

std::string MetricsText::Render() const {
  // Holding the shared_ptr keeps this snapshot alive even if the scheduler
  // publishes a new one meanwhile.
  std::shared_ptr<const Snapshot> snapshot = store_.Current();
  const std::int64_t now_ns = kernels::MonotonicNs();
  std::shared_ptr<const std::string> text;
  std::shared_ptr<const std::string> process_text;
  {
    std::lock_guard lock(mu_);
    if (snapshot == rendered_for_) text = text_;
    if (now_ns - process_read_ns_ < kProcessReuseNs) process_text = process_text_;
  }
  if (!text) {
    text = std::make_shared<const std::string>(Serialize(BuildFamilies(*snapshot)));
    std::lock_guard lock(mu_);
    rendered_for_ = std::move(snapshot);
    text_ = text;
  }
  if (!process_text) {
    process_text = std::make_shared<const std::string>(Serialize(process_.Families()));
    std::lock_guard lock(mu_);
    process_text_ = process_text;
    process_read_ns_ = now_ns;
  }
  return *text + *process_text;
}

}  // namespace numaprobe::daemon
