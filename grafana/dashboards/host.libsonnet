// SPDX-License-Identifier: Apache-2.0
// numaprobe / Host: is this host's NUMA healthy, and since when? The first
// screen answers with the quantities the alerts fire on, coloured at the
// alerts' levels (_config); the rows below hold the figures behind them.
local pairDrift = import '../pair_drift.libsonnet';
local pairPeers = import '../pair_peers.libsonnet';
local p = import 'panels.libsonnet';

{
  grafanaDashboards+:: {
    local c = $._config,
    // Every selector of this dashboard: numaprobe's targets, the chosen host.
    local host = '%s,job=~"$job",instance=~"$instance"' % c.selector,
    local q(expr, legend='') = p.query(expr % { host: host, window: c.roundCounterWindow }, legend),
    local iq(expr) = p.query(expr % { host: host }, instant=true),
    local driftSteps = p.steps('green', [[c.latencyDriftThreshold, 'red']]),
    local dropSteps = p.steps('red', [[-c.bandwidthDropThreshold, 'green']]),
    local peakDropSteps = p.steps('red', [[-c.peakBandwidthDropThreshold, 'green']]),
    // The peak kind's ops: fixed by the daemon (read, and write with
    // non-temporal stores), one panel each rather than a variable that would
    // be empty on the many hosts without probes.peak_bandwidth.
    local peakOps = ['read', 'write'],
    // Per remote pair, this host's deviation from its cohort's median.
    local peerDeviation = pairPeers.deviation(c, host, '%s,job=~"$job"' % c.selector),
    local peerSteps = p.steps('red', [[-c.peerRatioThreshold, 'green'], [c.peerRatioThreshold, 'red']]),
    local pair = '{{cpu_node}}→{{mem_node}}',
    local runbook(alert) = p.runbook(c.runbookURLPattern, alert),

    'numaprobe-host.json': p.dashboard(
      c.dashboardUIDs.host,
      'numaprobe / Host',
      "Is this host's NUMA healthy, and since when: drift from its baseline and from same-CPU peers at the alert levels, its firing alerts and the daemon's state; then the latency, bandwidth and core-to-core figures behind them.",
      [
        p.variable('job', 'Job', 'label_values(numaprobe_build_info{%s}, job)' % c.selector),
        p.variable('instance', 'Instance', 'label_values(numaprobe_build_info{%s,job=~"$job"}, instance)' % c.selector, multi=false, includeAll=false),
        p.variable('op', 'Bandwidth op', 'label_values(numaprobe_memory_bandwidth_bytes_per_second{%s}, op)' % host),
      ],
      [
        p.row('Health at a glance'),
        p.stat(
          'Firing numaprobe alerts',
          'numaprobe alerts firing for this host, by name (0: none). Needs the alerting rules loaded in this Prometheus; each alert links to this dashboard and to its runbook section.',
          [q('count by (alertname) (ALERTS{alertname=~"NumaProbe.*",alertstate="firing",%(host)s}) or on() vector(0)', '{{alertname}}')],
          'none',
          p.steps('green', [[1, 'red']]),
          w=8,
        ),
        p.table(
          'Baseline state and origin',
          'complete: the baseline is recorded (or restored) and drift is measured against it; recording: it is still being recorded. Origin says why it exists: first_start, restored, accepted, reset, settings_changed, topology_changed (NumaProbeTopologyChanged fires until `numaprobe baseline accept`), state_file_corrupt.',
          [iq('numaprobe_baseline_complete{%(host)s} * on(instance, job) group_left(origin) numaprobe_baseline_info{%(host)s}')],
          'none',
          w=6,
          h=4,
          thresholds=p.steps('yellow', [[1, 'green']]),
          hide=['Time', '__name__', 'instance', 'job'],
        ) { fieldConfig+: { defaults+: { mappings: [{ type: 'value', options: { '0': { text: 'recording' }, '1': { text: 'complete' } } }] } } },
        p.stat(
          'State file writes',
          'Whether the last write of the state file (the baseline) succeeded. failing: the directory is full or read-only, the baseline lives in memory only and a restart loses it (docs/runbook.md, NumaProbeStateNotWritten).',
          [q('numaprobe_state_last_write_successful{%(host)s}')],
          'none',
          p.steps('red', [[1, 'green']]),
          w=3,
          mappings=[{ type: 'value', options: { '0': { text: 'failing' }, '1': { text: 'ok' } } }],
        ),
        p.stat(
          'Node feature file writes',
          'Whether the last write of the Node Feature Discovery feature file succeeded (ok also where node_feature_directory is not set). failing: NFD drops the node labels when the last file written expires (docs/runbook.md, NumaProbeNodeFeaturesNotWritten).',
          [q('numaprobe_node_features_last_write_successful{%(host)s}')],
          'none',
          p.steps('red', [[1, 'green']]),
          w=3,
          mappings=[{ type: 'value', options: { '0': { text: 'failing' }, '1': { text: 'ok' } } }],
        ),
        p.stat(
          'Fault injection',
          'ACTIVE: test-only fault injection scales the published figures, which are fake. Never on in production.',
          [q('numaprobe_test_fault_injection_active{%(host)s}')],
          'none',
          p.steps('green', [[1, 'red']]),
          w=3,
          mappings=[{ type: 'value', options: { '0': { text: 'off' }, '1': { text: 'ACTIVE: fake figures' } } }],
        ),
        p.stat(
          'Staleness in refresh intervals',
          "The oldest last success of any pair (what the daemon exports per probe and NumaProbeProbeStale reads), in multiples of the host's refresh interval. NumaProbeProbeStale fires above %g for %s. Not peak bandwidth, which runs hours apart: see the Peak bandwidth row." % [c.staleRefreshIntervals, c.staleFor],
          [q('max((time() - numaprobe_probe_oldest_success_timestamp_seconds{%%(host)s,%s}) / on(instance, job) group_left() instance:numaprobe_refresh_interval_seconds:last{%%(host)s})' % c.roundProbes)],
          'none',
          p.steps('green', [[c.staleRefreshIntervals, 'red']]),
          w=4,
        ) + runbook('NumaProbeProbeStale'),

        p.matrix(
          'Latency drift: recent median / baseline',
          'Per pair, the recent median latency (median of the last 5 figures) over the baseline, minus 1: NumaProbeLatencyDrift fires on the worst pair of the host and names every red one. Red from +%g%%, the alert level (it also has to hold for %s).' % [c.latencyDriftThreshold * 100, c.driftFor],
          pairDrift.latency(host) + ' - 1',
          'percentunit',
          driftSteps,
          w=12,
        ) + runbook('NumaProbeLatencyDrift'),
        p.matrix(
          'Remote/local latency ratio vs same-CPU peers',
          "Per pair, the host's remote/local latency ratio (peer medians, of 9 figures) over the median of its cohort (same job, CPU model and NUMA topology), minus 1: what NumaProbeRemoteLocalRatioOutlier compares (held 1 h, or 2 h where figures refresh less often than every 10 min). Red beyond ±%g%%, the alert level; empty when the cohort is smaller than %d hosts or the host has one NUMA node." % [c.peerRatioThreshold * 100, c.peerCohortMin],
          peerDeviation,
          'percentunit',
          peerSteps,
          w=12,
        ) + runbook('NumaProbeRemoteLocalRatioOutlier'),
        p.matrix(
          'Bandwidth drift: recent median / baseline: $op',
          'Per pair, the recent median %s bandwidth over the baseline, minus 1: NumaProbeBandwidthDrop fires on the worst pair of the host and op and names every red one. Red from -%g%%, the alert level.' % ['$op', c.bandwidthDropThreshold * 100],
          pairDrift.bandwidth(host + ',op=~"$op"') + ' - 1',
          'percentunit',
          dropSteps,
          w=8,
        ) + runbook('NumaProbeBandwidthDrop') + p.perOp,

        p.timeseries(
          'Worst pair drift from baseline',
          "Since when: the worst pair's latency drift (recent median / baseline - 1) and the worst pair's bandwidth drift per op over time. Dashed: the alert levels. Host changes and baseline recordings are annotations.",
          p.queries([
            q('numaprobe_memory_latency_worst_pair_drift_ratio{%(host)s} - 1', 'latency, worst pair'),
            q('numaprobe_memory_bandwidth_worst_pair_drift_ratio{%(host)s} - 1', 'bandwidth {{op}}, worst pair'),
          ]),
          'percentunit',
          thresholds=p.steps('transparent', [[-c.bandwidthDropThreshold, 'transparent'], [c.latencyDriftThreshold, 'red']]),
        ),
        p.timeseries(
          'Worst pair deviation from peers',
          "Since when: the largest deviation of a pair's remote/local ratio from its cohort median, above (max) and below (min). Dashed: the alert levels. Empty when the cohort is smaller than %d hosts; needs two or more NUMA nodes." % c.peerCohortMin,
          p.queries([
            q('max(%s)' % peerDeviation, 'above peers'),
            q('min(%s)' % peerDeviation, 'below peers'),
          ]),
          'percentunit',
          thresholds=peerSteps,
        ),

        p.timeseries(
          'Baseline: series armed and recording',
          "Planned series whose baseline is armed (their drift is checked) and those still recording their first baseline.rounds figures; the recording's progress (figures recorded / needed); and how long it has recorded over what the schedule predicted (0 once every series is armed), which NumaProbeBaselineNotArmed fires on at %g. A big host arms its representatives first, every pair within hours; `numaprobe topology --config.file` previews when." % c.baselineArmFactor,
          p.queries([
            q('numaprobe_baseline_series{%(host)s}', '{{state}}'),
            q('numaprobe_baseline_recording_progress_ratio{%(host)s}', 'recorded / needed'),
            q('(time() - numaprobe_baseline_recording_since_timestamp_seconds{%(host)s}) / (numaprobe_baseline_expected_armed_timestamp_seconds{%(host)s} - numaprobe_baseline_recording_since_timestamp_seconds{%(host)s}) or on() vector(0)', 'recording time / predicted'),
          ]),
          'none',
          thresholds=p.steps('transparent', [[c.baselineArmFactor, 'red']]),
        ) + runbook('NumaProbeBaselineNotArmed'),

        p.row('Memory latency'),
        p.matrix(
          'Latency matrix (cpu_node × mem_node)',
          'Median memory latency of the last probe, rows = CPU node, columns = memory node. The diagonal is local memory. Plain values: how far remote is from local is the topology, not an anomaly (see the drift matrices above).',
          'quantile without(cpu) (0.5, numaprobe_memory_latency_seconds{%s})' % host,
          's',
        ),
        p.timeseries(
          'Latency per pair',
          'Recent median per CPU node → memory node pair (median of the last 5 figures, what the alerts use). One colour per pair on every panel.',
          [q('quantile without(cpu) (0.5, numaprobe_memory_latency_recent_median_seconds{%(host)s})', pair)],
          's',
        ),
        p.timeseries(
          'Latency drift from baseline per pair',
          'Recent median / baseline - 1 per pair. Dashed: the NumaProbeLatencyDrift level.',
          [q(pairDrift.latency('%(host)s') + ' - 1', pair)],
          'percentunit',
          thresholds=driftSteps,
        ),
        p.timeseries(
          'Remote/local latency ratio',
          'Latency of each pair over the local latency of its CPU node (1 on the diagonal).',
          [q('quantile without(cpu) (0.5, numaprobe_memory_latency_remote_local_ratio{%(host)s})', pair)],
          'percentunit',
        ),
        p.table(
          'Remote pairs: measured / firmware ratio',
          'Per remote pair, the measured remote/local latency ratio over the firmware (SLIT) distance ratio: a pair far from its peers on this table is slower (or faster) than the firmware says. Needs two or more NUMA nodes.',
          [iq('quantile without(cpu) (0.5, numaprobe_memory_latency_remote_local_ratio{%(host)s}) / on(instance, job, cpu_node, mem_node) group_left() (numaprobe_numa_distance{%(host)s} / 10 > 1)')],
          'percentunit',
          hide=['Time', '__name__', 'instance', 'job', 'cpu_model'],
        ),
        p.timeseries(
          'Latency spread (MAD / median)',
          'Median absolute deviation of the samples over their median, per pair: the noise of one figure.',
          [q('quantile without(cpu) (0.5, numaprobe_memory_latency_spread_seconds{%(host)s}) / quantile without(cpu) (0.5, numaprobe_memory_latency_seconds{%(host)s})', pair)],
          'percentunit',
        ),

        p.row('Memory bandwidth'),
        p.matrix(
          'Bandwidth matrix: $op',
          'Bandwidth of the last probe, rows = CPU node, columns = memory node, per op. Plain values (see the drift matrix above for anomalies).',
          'max without(threads) (numaprobe_memory_bandwidth_bytes_per_second{%s,op=~"$op"})' % host,
          'Bps',
          w=8,
        ) + p.perOp + { fieldConfig+: { defaults+: { decimals: 1 } } },
        p.timeseries(
          'Bandwidth per pair',
          'Recent median bandwidth per pair and op (median of the last 5 figures).',
          [q('max without(threads) (numaprobe_memory_bandwidth_recent_median_bytes_per_second{%(host)s,op=~"$op"})', pair + ' {{op}}')],
          'Bps',
        ),
        p.timeseries(
          'Bandwidth drift from baseline per pair',
          'Recent median / baseline - 1 per pair and op. Dashed: the NumaProbeBandwidthDrop level.',
          [q(pairDrift.bandwidth('%(host)s,op=~"$op"') + ' - 1', pair + ' {{op}}')],
          'percentunit',
          thresholds=dropSteps,
        ),

        p.row('Peak bandwidth'),
      ] + [
        p.matrix(
          'Peak bandwidth matrix: %s' % op,
          'The latest peak %s bandwidth (probes.peak_bandwidth: every usable CPU of the CPU node streaming at once%s), rows = CPU node, columns = memory node: each node to its own memory and, per node distance, to one remote node. What a node moves when all of it reads or writes: lower on a lost memory channel or a slower link. Measured every few hours on idle nodes; empty when probes.peak_bandwidth is not enabled.' % [op, if op == 'write' then ', non-temporal stores' else ''],
          'max without(threads) (numaprobe_memory_peak_bandwidth_bytes_per_second{%s,op="%s"})' % [host, op],
          'Bps',
          w=6,
        ) { fieldConfig+: { defaults+: { decimals: 1 } } }
        for op in peakOps
      ] + [
        p.matrix(
          'Peak bandwidth drift: recent median / baseline: %s' % op,
          "Per pair, the recent median peak %s bandwidth (of the last 5 figures) over its baseline, minus 1: NumaProbePeakBandwidthDrop fires on the worst pair of the host and op and names every red one. Red from -%g%%, the alert level: less than one memory channel of 12 (8.3%% of a node's peak)." % [op, c.peakBandwidthDropThreshold * 100],
          pairDrift.peak('%s,op="%s"' % [host, op]) + ' - 1',
          'percentunit',
          peakDropSteps,
          w=6,
        ) + runbook('NumaProbePeakBandwidthDrop')
        for op in peakOps
      ] + [
        p.timeseries(
          'Peak bandwidth drift from baseline per pair',
          'Since when: the recent median / baseline - 1 of each pair and op of the peak bandwidth. It moves once per figure, every few hours (sooner when a low figure is confirmed). Dashed: the NumaProbePeakBandwidthDrop level.',
          [q(pairDrift.peak('%(host)s') + ' - 1', pair + ' {{op}}')],
          'percentunit',
          w=10,
          thresholds=peakDropSteps,
        ),
        p.timeseries(
          'Peak probe runs by result (last %s)' % c.peakCounterWindow,
          "Runs of the peak bandwidth probe in the trailing %s by result. It runs every probes.peak_bandwidth.interval (6 h by default); skipped: a node whose CPUs were busy, tried again at the next round's end. A host that only skips is never measured: NumaProbeProbeStale does not judge this probe (it keeps hours, not rounds)." % c.peakCounterWindow,
          [q('sum by (result) (increase(numaprobe_probe_runs_total{%%(host)s,probe="peak_bandwidth"}[%s]))' % c.peakCounterWindow, '{{result}}')],
          'short',
          w=10,
        ),
        p.stat(
          'Peak probe: age of its oldest figure',
          "Time since the peak bandwidth probe's least recently refreshed pair last succeeded (the daemon's oldest success, per probe). Expect up to probes.peak_bandwidth.interval (6 h by default) plus the rounds it waits for idle CPUs.",
          [q('time() - numaprobe_probe_oldest_success_timestamp_seconds{%(host)s,probe="peak_bandwidth"}')],
          's',
          p.steps('blue'),
          w=4,
          h=8,
        ),
      ] + [
        p.matrix(
          'Interleave weights: %s' % source,
          {
            measured: "Weighted-interleave weights (pages of each memory node per round) that the kernel's own reduction gives the measured peak bandwidth, min(read, write), from each CPU node (rows): what suits allocations from that CPU node alone. Empty until a CPU node has peak figures of every memory node.",
            measured_nearest: "The kernel's reduction of each memory node's measured peak bandwidth from its nearest CPU node, as its auto mode takes the firmware's figures: what the kernel would set if the firmware's figures were the hardware's; one vector for every CPU node. Empty until each node's nearest CPU node has measured it.",
            kernel: 'The weights the kernel uses now (/sys/kernel/mm/mempolicy/weighted_interleave), one vector for every CPU node: set by the kernel from the firmware (auto) or by hand. Empty before Linux 6.9.',
            firmware: "The kernel's reduction of the firmware's (ACPI HMAT) bandwidth figures: what its auto mode sets. Empty without HMAT bandwidth.",
          }[source] + ' Empty on a host with fewer than two NUMA nodes with memory: nothing to interleave.',
          'max by (cpu_node, mem_node) (numaprobe_interleave_weight{%s,source="%s"})' % [host, source],
          'none',
          w=6,
        ) { fieldConfig+: { defaults+: { decimals: 0 } } }
        for source in ['measured', 'measured_nearest', 'kernel', 'firmware']
      ] + [
        p.timeseries(
          'Interleaved bandwidth ratio: kernel weights / measured weights',
          "Per CPU node, the bandwidth of an interleaved all-core stream with the kernel's weights over that with the measured_nearest weights, both on the CPU node's measured peak bandwidths. NumaProbeInterleaveWeightsCostBandwidth fires when it stays more than %g%% under 1 for %s. Empty on a host with fewer than two NUMA nodes with memory, before Linux 6.9, or until peak figures of every memory node exist." % [c.interleaveLossThreshold * 100, c.interleaveFor],
          [q('numaprobe_interleave_bandwidth_ratio{%(host)s}', 'CPU node {{cpu_node}}')],
          'percentunit',
          w=6,
        ),
      ] + [
        p.row('Core-to-core latency'),
        p.matrix(
          'Core-to-core latency matrix (cpu_a × cpu_b)',
          'One-way latency of a cache line bounced between two CPUs, with the line on the node of cpu_a.',
          'max by (cpu_a, cpu_b) (numaprobe_core_to_core_latency_seconds{%s})' % host,
          's',
          rowField='cpu_a',
          columnField='cpu_b',
          w=10,
        ),
        p.table(
          'Core-to-core latency by relation',
          'Median core-to-core latency by relation (same core, same node, cross node).',
          [iq('quantile by (relation) (0.5, numaprobe_core_to_core_latency_seconds{%(host)s})')],
          's',
          w=7,
          hide=['Time'],
        ),
        p.stat(
          'Cross-node core-to-core latency',
          'The worst core-to-core latency between CPUs of different NUMA nodes. Needs two or more NUMA nodes.',
          [q('max(numaprobe_core_to_core_latency_seconds{%(host)s,relation="cross_node"})')],
          's',
          p.steps('blue'),
          w=7,
          h=8,
        ),

        p.row('Probe health and cost'),
        p.timeseries(
          'Probe runs by result (last %s)' % c.roundCounterWindow,
          'Runs in the trailing %s by probe and result. Runs happen once per round (minutes apart), so a shorter window would show spikes and gaps instead of a rate.' % c.roundCounterWindow,
          [q('sum by (probe, result) (increase(numaprobe_probe_runs_total{%(host)s}[%(window)s]))', '{{probe}} {{result}}')],
          'short',
          w=8,
        ),
        p.timeseries(
          'Discarded samples by reason (last %s)' % c.roundCounterWindow,
          'Samples discarded and retried in the trailing %s (context switch, migration, ...): a busy host.' % c.roundCounterWindow,
          [q('sum by (probe, reason) (increase(numaprobe_samples_discarded_total{%(host)s}[%(window)s]))', '{{probe}} {{reason}}')],
          'short',
          w=8,
        ),
        p.timeseries(
          'Duty cycle vs budget',
          "Share of one CPU spent in probes: the daemon's own trailing 10-minute figure, the budget, and per probe over the trailing %s (probes run once per round, so a shorter window spikes above the budget). Dashed: %g × the budget, where NumaProbeDutyCycleOverBudget fires after %s." % [c.roundCounterWindow, c.dutyCycleBudgetFactor, c.dutyCycleFor],
          p.queries([
            q('numaprobe_duty_cycle_ratio{%(host)s}', 'observed (10 min window)'),
            q('numaprobe_duty_cycle_budget_ratio{%(host)s}', 'budget'),
            q('%g * numaprobe_duty_cycle_budget_ratio{%%(host)s}' % c.dutyCycleBudgetFactor, 'alert level'),
            q('sum by (probe) (rate(numaprobe_probe_cpu_seconds_total{%(host)s}[%(window)s]))', '{{probe}} probe CPU'),
          ]),
          'percentunit',
          w=8,
          min=0,
        ) + runbook('NumaProbeDutyCycleOverBudget'),
        p.table(
          'Refresh intervals since last success per pair',
          'Per probe and pair, the time since the last success in refresh intervals; red from %g, where NumaProbeProbeStale fires after %s. Not peak bandwidth, which runs hours apart: see the Peak bandwidth row.' % [c.staleRefreshIntervals, c.staleFor],
          [iq('(time() - numaprobe_probe_last_success_timestamp_seconds{%%(host)s,%s}) / on(instance, job) group_left() instance:numaprobe_refresh_interval_seconds:last{%%(host)s}' % c.roundProbes)],
          'none',
          thresholds=p.steps('green', [[c.staleRefreshIntervals, 'red']]),
          hide=['Time', 'instance', 'job'],
        ) + runbook('NumaProbeProbeStale'),
        p.table(
          'Baseline spread (max − min) / median',
          'How much the figures the baseline was recorded from varied, per pair: a noisy baseline makes drift noisy. One query each for latency, bandwidth and, where probes.peak_bandwidth is enabled, peak bandwidth.',
          [
            iq('quantile without(cpu) (0.5, numaprobe_memory_latency_baseline_spread_ratio{%(host)s})'),
            iq('numaprobe_memory_bandwidth_baseline_spread_ratio{%(host)s}') { refId: 'B' },
            iq('numaprobe_memory_peak_bandwidth_baseline_spread_ratio{%(host)s}') { refId: 'C' },
          ],
          'percentunit',
          hide=['Time', 'instance', 'job', 'threads'],
        ),
        p.row('Host facts and firmware-advertised figures (ACPI HMAT)'),
        p.table(
          'Measured / advertised latency ratio (ACPI HMAT)',
          "Measured idle latency of each pair over the read latency the firmware advertises (ACPI HMAT) for its CPU node's initiator class. Above 100%: slower than advertised. Compare with peers of the same CPU model and firmware rather than with 100%. Empty when the host's firmware publishes no HMAT.",
          [iq('numaprobe_memory_latency_hmat_ratio{%(host)s}')],
          'percentunit',
          w=8,
          hide=['Time', '__name__', 'instance', 'job'],
        ),
        p.table(
          'Measured / advertised bandwidth ratio (ACPI HMAT)',
          "Measured read and write bandwidth of each pair over what the firmware advertises (ACPI HMAT). Below 100%: less than advertised (a slower memory speed, a missing channel, a CXL link at lower width). Empty when the host's firmware publishes no HMAT.",
          [iq('numaprobe_memory_bandwidth_hmat_ratio{%(host)s}')],
          'percentunit',
          w=8,
          hide=['Time', '__name__', 'instance', 'job'],
        ),
        p.table(
          'Host facts',
          'The host settings numaprobe reads every round and on reload (numaprobe_host_fact_info): transparent huge pages, NUMA balancing, cpufreq governor and energy-performance preference per node, watched boot parameters, memory tiering, EDAC. Their changes are the orange "Host changes" annotations; docs/runbook.md says what each does.',
          [iq('numaprobe_host_fact_info{%(host)s}')],
          'none',
          w=8,
          hide=['Time', 'Value', '__name__', 'instance', 'job'],
        ),
      ],
      annotations=[
        {
          enable: true,
          hide: false,
          iconColor: 'orange',
          name: 'Host changes',
          expr: 'max by (field, before, after) (numaprobe_host_change_timestamp_seconds{%s}) * 1000' % host,
          step: '5m',
          titleFormat: '{{field}} changed',
          textFormat: '{{before}} -> {{after}}',
          tagKeys: 'field',
          useValueForTime: true,
        },
        {
          enable: true,
          hide: false,
          iconColor: 'purple',
          name: 'Baseline recording',
          expr: '(numaprobe_baseline_complete{%s} == 0) * on(instance, job) group_left(origin) numaprobe_baseline_info{%s}' % [host, host],
          step: '1m',
          titleFormat: 'baseline being recorded',
          textFormat: 'origin {{origin}}',
          tagKeys: 'origin',
        },
      ],
      clusterLabel=c.clusterLabel,
    ),
  },
}
