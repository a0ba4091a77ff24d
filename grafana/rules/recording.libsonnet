// SPDX-License-Identifier: Apache-2.0
// numaprobe recording rules: the ratios shared by the dashboards and the
// alerts (alerts.libsonnet). What is compared with what, the noise model and
// the thresholds: docs/detection.md.
//
// Naming: level:metric:operations (prometheus/docs practices/rules.md). The
// level lists the labels a result keeps besides job and any target labels from
// service discovery: `instance_cpu_node_mem_node:` is per host and node pair,
// `cpu_model_cpu_node_mem_node:` is per fleet cohort (job, cpu_model, NUMA
// topology, pair).
//
// Label handling shared by all rules:
// - per-CPU mode adds `cpu` to the latency series; the per-pair rules take the
//   median over the CPUs of a node (`quantile without(cpu)`), as the daemon
//   does for its per-host drift summaries (the per-pair drift itself, for the
//   alerts' descriptions and the host dashboard: ../pair_drift.libsonnet);
// - the cohort labels (cpu_model, numa_nodes, numa_distance_sum) come from the
//   daemon, on numaprobe_host_info and on the peer ratios.
//
// Failed scrapes: Prometheus marks every series of a target stale after a
// failed scrape, so an instant selector returns nothing until the next
// successful one, and a `for:` built on it starts again. The rules that feed
// alerts therefore read `last_over_time(...[gapWindow])`: the last figure
// published in the window survives any scrape gap shorter than
// NumaProbeExporterDown's `for:`. The daemon's figures change once per round
// (minutes), so the window never mixes up two rounds' worth of anything that
// matters; a series the daemon withdraws lingers for at most the window.

local pairPeers = import '../pair_peers.libsonnet';

{
  prometheusRules+:: {
    local c = $._config,

    groups+: [
      {
        name: 'numaprobe-ratios',
        rules: [
          // The worst (highest) remote/local latency ratio of a host, from the
          // latest figures as the daemon exports them (latency(cpu_node,
          // mem_node) / latency(cpu_node, cpu_node); the median over the CPUs
          // of a node in per-CPU mode): one number per host, what the fleet
          // dashboard draws by CPU model over its time range. The per-pair
          // ratios and the firmware distances are not recorded: only the host
          // dashboard shows them, and it reads one host's series directly.
          // Recorded per pair, they cost 64 series a host each to write and
          // read back every minute (4.9 s of the group's 5.4 s at 1,000 hosts,
          // docs/detection.md).
          {
            record: 'instance:numaprobe_memory_latency_seconds:max_ratio_local',
            expr: |||
              max by (%(instanceLabels)s) (
                quantile without(cpu) (0.5, numaprobe_memory_latency_remote_local_ratio{%(selector)s})
              )
            ||| % c,
          },
        ],
      },

      // Drift from the baseline per host (the daemon's recent medians, the
      // median of a series' last 5 figures: two outlier figures cannot move
      // them, against the stored baseline), and what other rules and the
      // dashboards need per host: the refresh interval and the local pairs.
      {
        name: 'numaprobe-detection',
        rules: [
          // The local pairs of a host (SLIT distance 10: a CPU node and its
          // own memory), one series per node, gap-tolerant. Read by the fleet
          // dashboard's bandwidth panels wherever "local" is needed, so that
          // a panel reads one series a node instead of every pair's distance.
          {
            record: 'instance_cpu_node_mem_node:numaprobe_numa_distance:local',
            expr: |||
              last_over_time(numaprobe_numa_distance{%(selector)s}[%(gapWindow)s]) == 10
            ||| % c,
          },
          // Expected time between two figures of one series on this host. Daemons
          // older than this metric ran every defaultRefreshSeconds.
          {
            record: 'instance:numaprobe_refresh_interval_seconds:last',
            expr: |||
              last_over_time(numaprobe_refresh_interval_seconds{%(selector)s}[%(gapWindow)s])
              or on(%(instanceLabels)s)
                max without(version, revision) (last_over_time(numaprobe_build_info{%(selector)s}[%(gapWindow)s])) * %(defaultRefreshSeconds)s
            ||| % c,
          },
          // Per host, the worst pair's latency and bandwidth (per op, then the
          // worst op) over the baseline, as the daemon exports them
          // (numaprobe_memory_*_worst_pair_drift_ratio), gap-tolerant and
          // without the target's other labels: what the fleet dashboard
          // ranks, counts and draws per CPU model over its time range, one
          // series a host. The alerts read the daemon's series themselves.
          {
            record: 'instance:numaprobe_memory_latency_recent_median_seconds:ratio_baseline_max',
            expr: |||
              max by (%(instanceLabels)s) (
                last_over_time(numaprobe_memory_latency_worst_pair_drift_ratio{%(selector)s}[%(gapWindow)s])
              )
            ||| % c,
          },
          {
            record: 'instance:numaprobe_memory_bandwidth_recent_median_bytes_per_second:ratio_baseline_min',
            expr: |||
              min by (%(instanceLabels)s) (
                last_over_time(numaprobe_memory_bandwidth_worst_pair_drift_ratio{%(selector)s}[%(gapWindow)s])
              )
            ||| % c,
          },
          // The same for the node's peak bandwidth (probes.peak_bandwidth),
          // the worst op: figures hours apart, the summary exported between them.
          {
            record: 'instance:numaprobe_memory_peak_bandwidth_recent_median_bytes_per_second:ratio_baseline_min',
            expr: |||
              min by (%(instanceLabels)s) (
                last_over_time(numaprobe_memory_peak_bandwidth_worst_pair_drift_ratio{%(selector)s}[%(gapWindow)s])
              )
            ||| % c,
          },
          // NumaProbePeakBandwidthDrop's hysteresis, per host and op: when
          // the worst pair's drop was last over the alert's threshold, and
          // when it was last back under the hold threshold (the evaluation's
          // time, present only then; a recovery only within the hold window
          // of a crossing, so that a healthy fleet records and the alert
          // reads next to nothing). The alert holds while the last crossing
          // is newer than the last recovery (alerts.libsonnet).
          {
            record: 'instance_op:numaprobe_memory_peak_bandwidth_drop_crossed:time',
            expr: |||
              (1 - last_over_time(numaprobe_memory_peak_bandwidth_worst_pair_drift_ratio{%(selector)s}[%(gapWindow)s]) > %(peakBandwidthDropThreshold)g) * 0 + time()
            ||| % c,
          },
          {
            record: 'instance_op:numaprobe_memory_peak_bandwidth_drop_recovered:time',
            expr: |||
              (1 - last_over_time(numaprobe_memory_peak_bandwidth_worst_pair_drift_ratio{%(selector)s}[%(gapWindow)s]) <= %(peakBandwidthHoldThreshold)g) * 0 + time()
                and on(%(instanceLabels)s, op) max_over_time(instance_op:numaprobe_memory_peak_bandwidth_drop_crossed:time{%(selector)s}[%(peakBandwidthHoldWindow)s])
            ||| % c,
          },
        ],
      },

      // The peer comparison: each host's remote/local latency ratios (of the
      // recent medians) against the same pairs of its peers, hosts of one job
      // with the same CPU model and NUMA topology. The daemon publishes each
      // remote pair's ratio with its cohort labels
      // (numaprobe_memory_latency_recent_remote_local_ratio), so the cohort
      // median is one read of every pair and each host's largest deviation
      // another (docs/detection.md, "Cost at fleet scale"). The two reads are
      // in groups of their own: the deviation reads the median one
      // evaluation late, which an alert held for an hour does not notice.
      {
        name: 'numaprobe-peer-ratios',
        rules: [
          // The cohort a host belongs to: its cpu_model and NUMA topology
          // (numa_nodes, numa_distance_sum), which the daemon puts on
          // numaprobe_host_info; taken from the current series, or the last
          // one seen during a scrape gap (the `or on` keeps a host_info change
          // from matching two series). Always 1. What the fleet dashboard
          // filters and counts cohorts by.
          {
            record: 'instance:numaprobe_host_info:cohort',
            expr: |||
              group by (%(instanceLabels)s, %(cohortLabels)s) (
                numaprobe_host_info{%(selector)s} or on(%(instanceLabels)s) last_over_time(numaprobe_host_info{%(selector)s}[%(gapWindow)s])
              )
            ||| % c,
          },
          // What Alertmanager groups a fleet rollout's drift alerts by
          // (grafana/alertmanager.yml): a host's cpu_model, from its cohort,
          // and its newest host change (change, from
          // numaprobe_host_last_change_timestamp_seconds: every field the
          // daemon saw changed at that moment), one series per host. A host
          // with no change since its baseline has no change label, one
          // without host info no cpu_model. The value is the change's Unix
          // time (0 without one), so that where a series overlaps its
          // successor for a while (a scrape gap, or a new change: promtool
          // and VictoriaMetrics write no staleness markers) `topk` keeps the
          // newer and an alert's labels never flip between the two.
          {
            local newestChange = |||
              topk by (%(instanceLabels)s) (1, last_over_time(numaprobe_host_last_change_timestamp_seconds{%(selector)s}[%(gapWindow)s]))
            ||| % c,
            local model = 'topk by (%(instanceLabels)s) (1, instance:numaprobe_host_info:cohort) * 0' % c,
            record: 'instance:numaprobe_host_info:rollout',
            expr: |||
              max by (%(instanceLabels)s, cpu_model, change) (
                %(model)s
                + on(%(instanceLabels)s) group_left(change) %(newestChange)s
              )
              or on(%(instanceLabels)s) max by (%(instanceLabels)s, cpu_model) (%(model)s)
              or on(%(instanceLabels)s) max by (%(instanceLabels)s, change) (%(newestChange)s)
            ||| % (c { model: model, newestChange: std.rstripChars(newestChange, '\n') }),
          },
          // Per cohort and remote pair, the median of the hosts' ratios: only
          // where the cohort has at least peerCohortMin hosts with the pair,
          // so that it stands on healthy hosts even if two are off.
          {
            record: 'cpu_model_cpu_node_mem_node:numaprobe_memory_latency_recent_remote_local_ratio:peer_median',
            expr: |||
              quantile by (%(jobLabels)s, %(cohortLabels)s, cpu_node, mem_node) (0.5,
                last_over_time(numaprobe_memory_latency_recent_remote_local_ratio{%(selector)s}[%(gapWindow)s])
              )
              and on(%(jobLabels)s, %(cohortLabels)s, cpu_node, mem_node)
                count by (%(jobLabels)s, %(cohortLabels)s, cpu_node, mem_node) (
                  last_over_time(numaprobe_memory_latency_recent_remote_local_ratio{%(selector)s}[%(gapWindow)s])
                ) >= %(peerCohortMin)g
            ||| % c,
          },
        ],
      },
      {
        name: 'numaprobe-peer-deviation',
        rules: [
          // Per host, the largest deviation of any remote pair's ratio from
          // its cohort median, either way (0.1 = 10% above or below): what
          // NumaProbeRemoteLocalRatioOutlier fires on and the fleet dashboard
          // ranks, one series a host. The cohort labels stay on it for the
          // alert's description and the dashboards' filters.
          {
            record: 'instance:numaprobe_memory_latency_recent_remote_local_ratio:peer_deviation_max',
            // The per-pair deviation is pair_peers.libsonnet's, which the alert's
            // description and the host dashboard spell out for one host.
            expr: 'max by (%s, %s) (abs(%s))' % [
              c.instanceLabels,
              c.cohortLabels,
              pairPeers.deviation(c, c.selector, window=c.gapWindow),
            ],
          },
        ],
      },

      // What NumaProbeProbesFailing compares: each host's and probe's run
      // rate, the runs made and the failed ones, summed over the results (14
      // per probe). Recorded at every evaluation so that the alert averages
      // these few series over its hour instead of reading every result's
      // counter over the hour twice. rate() before sum: each counter's resets
      // (a daemon restart) are handled before the results are added up.
      {
        name: 'numaprobe-probe-runs',
        rules: [
          // skipped: a run the idle gate did not let start (peak_bandwidth on
          // a node whose CPUs were busy; tried again at the next round's
          // end) was not made, so it is neither a run nor a failure here: a
          // busy node's many skips must not dilute the failures of the runs
          // that were made.
          {
            record: 'instance_probe:numaprobe_probe_runs:rate%(probeRunsRateWindow)s' % c,
            expr: |||
              sum without(result) (rate(numaprobe_probe_runs_total{%(selector)s, result!="skipped"}[%(probeRunsRateWindow)s]))
            ||| % c,
          },
          // disturbed (samples discarded, retried) and cancelled (shutdown,
          // reload) are not failures, nor is skipped (above); bind_failed
          // and placement_* runs are also counted in
          // numaprobe_placement_failures_total and have their own alert.
          {
            record: 'instance_probe:numaprobe_probe_runs_failed:rate%(probeRunsRateWindow)s' % c,
            expr: |||
              sum without(result) (rate(numaprobe_probe_runs_total{%(selector)s, result!~"ok|disturbed|cancelled|skipped|bind_failed|placement_mismatch|placement_unverified"}[%(probeRunsRateWindow)s]))
            ||| % c,
          },
        ],
      },
    ],
  },
}
