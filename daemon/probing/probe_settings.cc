#include "daemon/probing/probe_settings.h"

namespace numaprobe::daemon {

ProbeSettings ProbeSettingsFrom(const Config& config) {
  ProbeSettings settings;
  settings.latency.samples = config.latency.samples;
  settings.latency.loads_per_sample = config.latency.loads_per_sample;
  settings.bandwidth.burst_bytes = config.bandwidth.burst_bytes;
  settings.bandwidth.bursts = config.bandwidth.bursts;
  settings.bandwidth_threads = config.bandwidth.threads;
  settings.ops = config.bandwidth.ops;
  settings.c2c.samples = config.core_to_core.samples;
  settings.c2c.round_trips = config.core_to_core.round_trips;
  settings.loaded_latency.samples = config.loaded_latency.samples;
  settings.loaded_latency.loads_per_sample = config.loaded_latency.loads_per_sample;
  settings.loaded_traffic = config.loaded_latency.traffic;
  settings.loaded_load_threads = config.loaded_latency.load_threads;
  settings.latency_buffer_bytes = config.latency.buffer_bytes;
  settings.stride = config.latency.stride_bytes;
  settings.bandwidth_buffer_bytes = config.bandwidth.buffer_bytes;
  return settings;
}

FigureContext FigureContextFrom(const Config& config) { return {config.targets.per_cpu, config.bandwidth.threads}; }

BufferSettings BufferSettingsFrom(const Config& config) {
  BufferSettings settings;
  settings.pages = config.memory.pages;
  settings.budget_bytes = config.memory.budget_bytes;
  return settings;
}

}  // namespace numaprobe::daemon
