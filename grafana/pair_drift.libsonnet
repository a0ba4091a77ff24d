// SPDX-License-Identifier: Apache-2.0
// A node pair's drift from its baseline, for any selector: what the daemon
// reduces to each host's worst pair (numaprobe_memory_*_worst_pair_drift_ratio,
// daemon/web/metrics_drift.cc), spelled out per pair for whoever needs the
// pairs of one host: the drift alerts' descriptions and the host dashboard.
// Reading it for every host is what the daemon's summary saves the rules.
{
  // `window` '' reads the series as they are; a duration reads each through
  // last_over_time (rides over failed scrapes, as the alerts do).
  local read(metric, selector, window) =
    if window == '' then '%s{%s}' % [metric, selector]
    else 'last_over_time(%s{%s}[%s])' % [metric, selector, window],

  // Recent median / baseline; per-CPU mode: each side the median over the
  // node's CPUs. 1.10 = 10% slower than the baseline.
  latency(selector, window=''):: 'quantile without(cpu) (0.5, %s) / quantile without(cpu) (0.5, %s)' % [
    read('numaprobe_memory_latency_recent_median_seconds', selector, window),
    read('numaprobe_memory_latency_baseline_seconds', selector, window),
  ],
  // Recent median / baseline per op, of a bandwidth kind's series (`stem`).
  // A `threads` label appears on some of them (bandwidth: only when more than
  // one thread is configured; peak: the CPUs that streamed together);
  // dropped on both sides, so the two match whether or not either has it.
  local perOp(stem, selector, window) = 'max without(threads) (%s) / max without(threads) (%s)' % [
    read(stem + '_recent_median_bytes_per_second', selector, window),
    read(stem + '_baseline_bytes_per_second', selector, window),
  ],
  // 0.80 = 20% less bandwidth.
  bandwidth(selector, window=''):: perOp('numaprobe_memory_bandwidth', selector, window),
  // The node's peak (every CPU of the CPU node streaming at once, ops read
  // and write): what numaprobe_memory_peak_bandwidth_worst_pair_drift_ratio
  // reduces to the worst pair.
  peak(selector, window=''):: perOp('numaprobe_memory_peak_bandwidth', selector, window),
}
