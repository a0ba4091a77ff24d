// SPDX-License-Identifier: Apache-2.0
// numaprobe / Fleet: which hosts are out of line, bounded at 1,000 hosts.
// Per-host tables list only hosts over an alert level, at most fleetTopK of
// them, worst over the dashboard's time range (an instant query over
// [$__range], not topk over a range, which returns more than k series); a
// stat beside each counts them all. Everything is scoped by the selector and
// by the cpu_model and numa_nodes variables (the cohort of
// instance:numaprobe_host_info:cohort).
local p = import 'panels.libsonnet';

{
  grafanaDashboards+:: {
    local c = $._config,
    local fleet = '%s,job=~"$job",instance=~"$instance"' % c.selector,
    local cohort = 'instance:numaprobe_host_info:cohort{%s,cpu_model=~"$cpu_model",numa_nodes=~"$numa_nodes"}' % fleet,
    local v = {
      fleet: fleet,
      cohort: cohort,
      // per-cohort recordings carry no instance
      peerFleet: '%s,job=~"$job",cpu_model=~"$cpu_model",numa_nodes=~"$numa_nodes"' % c.selector,
      k: c.fleetTopK,
      drift: c.latencyDriftThreshold,
      drop: c.bandwidthDropThreshold,
      peakDrop: c.peakBandwidthDropThreshold,
      peer: c.peerRatioThreshold,
      stale: c.staleRefreshIntervals,
      failing: c.probeFailingRatio,
      window: c.probeFailingWindow,
      // per host: the worst pair's drift over the range
      // (from per-host recordings of the worst pair: one series a host)
      latencyWorst: 'max_over_time(instance:numaprobe_memory_latency_recent_median_seconds:ratio_baseline_max{%s}[$__range]) - 1' % fleet,
      bandwidthWorst: '1 - min_over_time(instance:numaprobe_memory_bandwidth_recent_median_bytes_per_second:ratio_baseline_min{%s}[$__range])' % fleet,
      peakWorst: '1 - min_over_time(instance:numaprobe_memory_peak_bandwidth_recent_median_bytes_per_second:ratio_baseline_min{%s}[$__range])' % fleet,
      peerWorst: 'max_over_time(instance:numaprobe_memory_latency_recent_remote_local_ratio:peer_deviation_max{%s}[$__range])' % fleet,
      // per host: the oldest pair's age in refresh intervals, from the
      // oldest last success the daemon exports per probe (what
      // NumaProbeProbeStale reads): a few series a host, not every pair's
      // timestamp. The probes of the rounds only (roundProbes: not
      // peak_bandwidth, hours apart by design).
      staleNow: '(time() - min by (instance, job) (last_over_time(numaprobe_probe_oldest_success_timestamp_seconds{%s,%s}[%s]))) / on(instance, job) instance:numaprobe_refresh_interval_seconds:last{%s}' % [fleet, c.roundProbes, c.gapWindow, fleet],
      // The failed share of the runs made, as NumaProbeProbesFailing counts
      // them (recording.libsonnet): skipped runs are neither.
      failingNow: 'max by (instance, job) (sum without(result) (increase(numaprobe_probe_runs_total{%s,result!~"ok|disturbed|cancelled|skipped|bind_failed|placement_mismatch|placement_unverified"}[%s])) / sum without(result) (increase(numaprobe_probe_runs_total{%s,result!="skipped"}[%s])))' % [fleet, c.probeFailingWindow, fleet, c.probeFailingWindow],
    },
    local f(expr) = expr % v,
    local q(expr, legend='') = p.query(f(expr), legend),
    local iq(expr) = p.query(f(expr), instant=true),
    local sq(expr, legend='') = p.statQuery(f(expr), legend),
    local runbook(alert) = p.runbook(c.runbookURLPattern, alert),
    // Links a host's row to its host dashboard.
    local hostLink = {
      fieldConfig+: { overrides+: [{
        matcher: { id: 'byName', options: 'instance' },
        properties: [{ id: 'links', value: [{ title: 'numaprobe / Host', url: '/d/%s?var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}' % c.dashboardUIDs.host }] }],
      }] },
    },
    // A worst-k table: only hosts over the level, worst first.
    local worst(title, description, expr, unit, steps, alert) =
      p.table(title,
              description,
              [iq('sort_desc(topk(%(k)d, (' + expr + ') and on(instance, job) %(cohort)s))')],
              unit,
              thresholds=steps,
              hide=['Time'],
              w=9) + hostLink + runbook(alert),
    // Beside it: how many hosts are over and under the level.
    local counts(title, description, expr, level) =
      p.stat(title, description, p.queries([
        sq('count((' + expr + ') > ' + level + ' and on(instance, job) %(cohort)s) or on() vector(0)', 'over'),
        sq('count((' + expr + ') <= ' + level + ' and on(instance, job) %(cohort)s) or on() vector(0)', 'under'),
      ]), 'none', p.steps('blue'), w=3, h=8),

    'numaprobe-fleet.json': p.dashboard(
      c.dashboardUIDs.fleet,
      'numaprobe / Fleet',
      'Which hosts are out of line: drift from their baselines and from same-CPU, same-topology peers, failing or stale probes, per CPU model; only hosts over an alert level are listed. Rows link to the host dashboard.',
      [
        p.variable('job', 'Job', 'label_values(numaprobe_build_info{%s}, job)' % c.selector),
        p.variable('instance', 'Instance', 'label_values(numaprobe_build_info{%s,job=~"$job"}, instance)' % c.selector),
        p.variable('cpu_model', 'CPU model', 'label_values(instance:numaprobe_host_info:cohort{%s}, cpu_model)' % fleet),
        p.variable('numa_nodes', 'NUMA nodes', 'label_values(instance:numaprobe_host_info:cohort{%s,cpu_model=~"$cpu_model"}, numa_nodes)' % fleet),
        p.variable('op', 'Bandwidth op', 'label_values(numaprobe_memory_bandwidth_bytes_per_second{%s}, op)' % fleet),
      ],
      [
        p.row('Overview'),
        p.stat('Hosts reporting',
               'Hosts of the selected cohorts whose numaprobe is scraped.',
               [sq('count(numaprobe_build_info{%(fleet)s} and on(instance, job) %(cohort)s)')],
               'none',
               p.steps('blue'),
               w=5),
        p.stat('Targets down',
               "numaprobe's scrape targets Prometheus cannot scrape now (up == 0). NumaProbeExporterDown fires after %s." % c.exporterDownFor,
               [sq('count(up{%(fleet)s} == 0) or on() vector(0)')],
               'none',
               p.steps('green', [[1, 'red']]),
               w=5),
        p.stat('Hosts with firing numaprobe alerts',
               'Hosts with at least one firing numaprobe alert (needs the alerting rules loaded in this Prometheus).',
               [sq('count(count by (instance, job) (ALERTS{alertname=~"NumaProbe.*",alertstate="firing",%(fleet)s})) or on() vector(0)')],
               'none',
               p.steps('green', [[1, 'red']]),
               w=5),
        p.stat('Stale hosts',
               'Hosts with a pair not refreshed for more than %g refresh intervals (NumaProbeProbeStale level; the probes of the rounds, not peak bandwidth, which runs hours apart).' % c.staleRefreshIntervals,
               [sq('count((%(staleNow)s) > %(stale)g and on(instance, job) %(cohort)s) or on() vector(0)')],
               'none',
               p.steps('green', [[1, 'red']]),
               w=5),
        p.stat('numaprobe versions',
               'Hosts per numaprobe version.',
               [sq('count by (version) (numaprobe_build_info{%(fleet)s} and on(instance, job) %(cohort)s)', '{{version}}')],
               'none',
               p.steps('blue'),
               w=4),

        p.row('Drift from baseline'),
        p.timeseries(
          'Latency drift band by CPU model',
          "Per CPU model, the median, 90th percentile and maximum over hosts of each host's worst pair latency drift (recent median / baseline - 1). A rollout that moves the whole band stays visible while every host is under the alert level (dashed, +%g%%)." % (c.latencyDriftThreshold * 100),
          p.queries([
            q('quantile by (cpu_model) (0.5, instance:numaprobe_memory_latency_recent_median_seconds:ratio_baseline_max{%(fleet)s} * on(instance, job) group_left(cpu_model) %(cohort)s) - 1', '{{cpu_model}} median'),
            q('quantile by (cpu_model) (0.9, instance:numaprobe_memory_latency_recent_median_seconds:ratio_baseline_max{%(fleet)s} * on(instance, job) group_left(cpu_model) %(cohort)s) - 1', '{{cpu_model}} p90'),
            q('max by (cpu_model) (instance:numaprobe_memory_latency_recent_median_seconds:ratio_baseline_max{%(fleet)s} * on(instance, job) group_left(cpu_model) %(cohort)s) - 1', '{{cpu_model}} max'),
          ]),
          'percentunit',
          thresholds=p.steps('transparent', [[c.latencyDriftThreshold, 'red']]),
        ),
        p.timeseries(
          'Bandwidth drift band by CPU model',
          "Per CPU model, the median, 10th percentile and minimum over hosts of each host's worst pair bandwidth drift (recent median / baseline - 1). Dashed: the NumaProbeBandwidthDrop level, -%g%%." % (c.bandwidthDropThreshold * 100),
          p.queries([
            q('quantile by (cpu_model) (0.5, instance:numaprobe_memory_bandwidth_recent_median_bytes_per_second:ratio_baseline_min{%(fleet)s} * on(instance, job) group_left(cpu_model) %(cohort)s) - 1', '{{cpu_model}} median'),
            q('quantile by (cpu_model) (0.1, instance:numaprobe_memory_bandwidth_recent_median_bytes_per_second:ratio_baseline_min{%(fleet)s} * on(instance, job) group_left(cpu_model) %(cohort)s) - 1', '{{cpu_model}} p10'),
            q('min by (cpu_model) (instance:numaprobe_memory_bandwidth_recent_median_bytes_per_second:ratio_baseline_min{%(fleet)s} * on(instance, job) group_left(cpu_model) %(cohort)s) - 1', '{{cpu_model}} min'),
          ]),
          'percentunit',
          thresholds=p.steps('red', [[-c.bandwidthDropThreshold, 'transparent']]),
        ),
        worst('Worst latency drift over the range',
              'Hosts whose worst pair latency drift (recent median / baseline - 1) went over +%g%% (the NumaProbeLatencyDrift level) during the time range, worst first, at most %d. Empty when no host did.' % [c.latencyDriftThreshold * 100, c.fleetTopK],
              '(%(latencyWorst)s) > %(drift)g',
              'percentunit',
              p.steps('green', [[c.latencyDriftThreshold, 'red']]),
              'NumaProbeLatencyDrift'),
        counts('Hosts over / under: latency', 'Hosts whose worst latency drift over the range was over / under +%g%%.' % (c.latencyDriftThreshold * 100), '%(latencyWorst)s', '%(drift)g'),
        worst('Worst bandwidth drift over the range',
              'Hosts whose worst pair bandwidth drop (1 - recent median / baseline) went over %g%% (the NumaProbeBandwidthDrop level) during the time range, worst first, at most %d. Empty when no host did.' % [c.bandwidthDropThreshold * 100, c.fleetTopK],
              '(%(bandwidthWorst)s) > %(drop)g',
              'percentunit',
              p.steps('green', [[c.bandwidthDropThreshold, 'red']]),
              'NumaProbeBandwidthDrop'),
        counts('Hosts over / under: bandwidth', 'Hosts whose worst bandwidth drop over the range was over / under %g%%.' % (c.bandwidthDropThreshold * 100), '%(bandwidthWorst)s', '%(drop)g'),
        worst('Worst peak bandwidth drift over the range',
              'Hosts whose worst pair peak bandwidth drop (1 - recent median / baseline of every CPU of a node streaming at once, probes.peak_bandwidth) went over %g%% (the NumaProbePeakBandwidthDrop level: less than one memory channel of 12) during the time range, worst first, at most %d. Empty when no host did, and on hosts without probes.peak_bandwidth enabled.' % [c.peakBandwidthDropThreshold * 100, c.fleetTopK],
              '(%(peakWorst)s) > %(peakDrop)g',
              'percentunit',
              p.steps('green', [[c.peakBandwidthDropThreshold, 'red']]),
              'NumaProbePeakBandwidthDrop'),
        counts('Hosts over / under: peak bandwidth', 'Hosts whose worst peak bandwidth drop over the range was over / under %g%% (hosts measuring peak bandwidth only).' % (c.peakBandwidthDropThreshold * 100), '%(peakWorst)s', '%(peakDrop)g'),
        p.table(
          'Host changes of the worst hosts',
          'The host changes (kernel, microcode, firmware, numaprobe version, EDAC DIMMs, node memory, ...) since the baseline of the hosts in the worst latency, bandwidth and peak bandwidth drift tables. Empty when no host drifted.',
          [iq('max by (instance, job, field, before, after) (numaprobe_host_change_timestamp_seconds{%(fleet)s}) * 1000 and on(instance, job) topk(%(k)d, (%(latencyWorst)s) > %(drift)g or (%(bandwidthWorst)s) > %(drop)g or (%(peakWorst)s) > %(peakDrop)g)')],
          'none',
          hide=['Time'],
          w=24,
        ) + hostLink + { fieldConfig+: { overrides+: [{ matcher: { id: 'byName', options: 'Value' }, properties: [{ id: 'unit', value: 'dateTimeAsIso' }, { id: 'displayName', value: 'first seen' }] }] } },

        p.row('Deviation from same-CPU peers'),
        worst('Worst deviation from peers over the range',
              "Hosts whose remote/local latency ratio of some pair deviated more than ±%g%% (the NumaProbeRemoteLocalRatioOutlier level) from their cohort's median (same job, CPU model and NUMA topology) during the time range, worst first, at most %d. Empty when no host did." % [c.peerRatioThreshold * 100, c.fleetTopK],
              '(%(peerWorst)s) > %(peer)g',
              'percentunit',
              p.steps('green', [[c.peerRatioThreshold, 'red']]),
              'NumaProbeRemoteLocalRatioOutlier'),
        counts('Hosts over / under: peers', 'Hosts whose worst deviation from peers over the range was over / under ±%g%%.' % (c.peerRatioThreshold * 100), '%(peerWorst)s', '%(peer)g'),
        p.table(
          'Peer cohorts',
          'The cohorts hosts are compared within: job, CPU model and NUMA topology (node count, sum of the SLIT distances), with their host count. A cohort smaller than %d hosts is not judged.' % c.peerCohortMin,
          [iq('count by (job, cpu_model, numa_nodes, numa_distance_sum) (%(cohort)s)')],
          'none',
          hide=['Time'],
          thresholds=p.steps('orange', [[c.peerCohortMin, 'green']]),
        ),

        p.row('Failing or stale probes'),
        worst('Probe failure ratio by host (last hour)',
              'Hosts whose worst probe failed more than %g%% of its runs in the last %s (the NumaProbeProbesFailing level), worst first, at most %d. Empty when none did.' % [c.probeFailingRatio * 100, c.probeFailingWindow, c.fleetTopK],
              '(%(failingNow)s) > %(failing)g',
              'percentunit',
              p.steps('green', [[c.probeFailingRatio, 'red']]),
              'NumaProbeProbesFailing'),
        worst('Stale hosts (refresh intervals since last success)',
              "Hosts with a pair whose last success is more than %g of the host's refresh intervals old (the NumaProbeProbeStale level; the probes of the rounds, not peak bandwidth, which runs hours apart), worst first, at most %d. Empty when none is." % [c.staleRefreshIntervals, c.fleetTopK],
              '(%(staleNow)s) > %(stale)g',
              'none',
              p.steps('green', [[c.staleRefreshIntervals, 'red']]),
              'NumaProbeProbeStale'),
        p.table(
          'Down targets',
          "numaprobe's scrape targets that Prometheus cannot scrape now, at most %d. Empty when none is down." % c.fleetTopK,
          [iq('topk(%(k)d, up{%(fleet)s} == 0)')],
          'none',
          hide=['Time', '__name__'],
          w=6,
        ),

        p.row('Distribution by CPU model'),
        p.timeseries(
          'Remote/local latency ratio across hosts by CPU model',
          "Per CPU model, the 10th, 50th and 90th percentile over hosts of the host's worst remote/local latency ratio.",
          p.queries([
            q('quantile by (cpu_model) (%g, instance:numaprobe_memory_latency_seconds:max_ratio_local{%%(fleet)s} and on(instance, job) %%(cohort)s)' % x, '{{cpu_model}} p%d' % (x * 100))
            for x in [0.1, 0.5, 0.9]
          ]),
          'percentunit',
        ),
        p.table(
          'Remote pairs: remote/local ratio by CPU model',
          'Per cohort (CPU model and NUMA topology) and remote pair, the median over hosts of the remote/local latency ratio of the peer medians (of 9 figures): the cohort median the peer alert compares each host with. Only cohorts of at least %d hosts with the pair; needs two or more NUMA nodes.' % c.peerCohortMin,
          [iq('cpu_model_cpu_node_mem_node:numaprobe_memory_latency_recent_remote_local_ratio:peer_median{%(peerFleet)s}')],
          'percentunit',
          hide=['Time', '__name__'],
        ),
        // The two bandwidth panels read every host's figure of every pair:
        // one copy per op, so that each query reads one op's figures (at
        // 1,000 8-node hosts 64,000 series, not 192,000; grafana/README.md,
        // "At 1,000 hosts").
        p.timeseries(
          'Local bandwidth across hosts by CPU model: $op',
          "Per CPU model, the median over hosts of each host's local (cpu_node = mem_node) $op bandwidth, itself the median over the host's nodes.",
          // Per host first (the recorded local pairs select the figures),
          // then the join with the cohort over one series a host.
          [q('quantile by (cpu_model, op) (0.5, quantile without(cpu_node, mem_node, threads) (0.5, numaprobe_memory_bandwidth_bytes_per_second{%(fleet)s,op=~"$op"} and on(instance, job, cpu_node, mem_node) instance_cpu_node_mem_node:numaprobe_numa_distance:local{%(fleet)s}) * on(instance, job) group_left(cpu_model) %(cohort)s)', '{{cpu_model}} {{op}}')],
          'Bps',
          w=8,
        ) + p.perOp,
        p.table(
          'Remote bandwidth distribution by CPU model: $op',
          'Per CPU model and remote pair, the median over hosts of the $op bandwidth. Needs two or more NUMA nodes.',
          // quantile drops the threads label (one value per host); the local
          // pairs are the recorded few per host, not every pair's distance.
          [iq('quantile by (cpu_model, cpu_node, mem_node, op) (0.5, (numaprobe_memory_bandwidth_bytes_per_second{%(fleet)s,op=~"$op"} unless on(instance, job, cpu_node, mem_node) instance_cpu_node_mem_node:numaprobe_numa_distance:local{%(fleet)s}) * on(instance, job) group_left(cpu_model) %(cohort)s)')],
          'Bps',
          hide=['Time'],
          w=8,
        ) + p.perOp,
      ],
      clusterLabel=c.clusterLabel,
    ),
  },
}
