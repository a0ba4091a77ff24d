// SPDX-License-Identifier: Apache-2.0
// The knobs of the numaprobe mixin. Override them once, e.g.
//   (import 'mixin.libsonnet') + { _config+:: { selector: 'job="node-numa"' } }
// and the alerts, the recording rules and the dashboards follow. Why each
// threshold has its value: docs/detection.md.
{
  _config+:: {
    // Label matchers that select numaprobe's scrape targets.
    selector: 'job=~"numaprobe.*"',
    // A label that tells Prometheus servers or clusters apart in a global
    // view (e.g. 'cluster'); '' when there is none. When set it is kept in
    // every aggregation and vector match beside instance and job.
    clusterLabel: '',

    // The project's address, written only here: the runbook links below and
    // the .deb's Homepage (cmake/packaging.cmake reads this line) follow it.
    homepage: 'https://github.com/numaprobe/numaprobe',
    // The git ref whose runbook the links open: main for the rules kept here,
    // which follow the code. A bundle or chart made for a release image
    // (deploy/kubernetes/make-bundle.py, deploy/helm/make-chart.py) sets the
    // release's tag, so a link opens the runbook of the version that runs.
    runbookRef: 'main',
    // Where an alert's runbook_url points: the runbook section is the alert
    // name in lower case.
    runbookURLPattern: self.homepage + '/blob/' + self.runbookRef + '/docs/runbook.md#%s',
    // Where an alert's dashboard_url points. grafanaURL '' gives links
    // relative to Grafana (they work from Grafana's alert list); set it, e.g.
    // 'https://grafana.example.com', for links in notifications.
    grafanaURL: '',
    dashboardUIDs: { host: 'numaprobe-host', fleet: 'numaprobe-fleet' },
    // The host dashboard at the alert's host (Go template, expanded by Prometheus).
    hostDashboardURL: '%s/d/%s?var-job={{ $labels.job | urlquery }}&var-instance={{ $labels.instance | urlquery }}'
                      % [self.grafanaURL, self.dashboardUIDs.host],
    fleetDashboardURL: '%s/d/%s' % [self.grafanaURL, self.dashboardUIDs.fleet],

    // Gap tolerance: the rules that feed alerts read last_over_time over this
    // window, so a scrape gap shorter than it does not restart a `for:`.
    gapWindow: '15m',
    // Refresh interval assumed for daemons that do not export
    // numaprobe_refresh_interval_seconds (they ran every 5 minutes).
    defaultRefreshSeconds: 300,

    // NumaProbeLatencyDrift: recent median over baseline, as a fraction.
    latencyDriftThreshold: 0.06,
    // NumaProbeBandwidthDrop: recent median under baseline, as a fraction.
    bandwidthDropThreshold: 0.13,
    // NumaProbePeakBandwidthDrop: the peak (a node's CPUs streaming at once,
    // as many as saturate its memory: probes.peak_bandwidth) recent median under baseline, as a
    // fraction. A node's peak is the sum of its memory channels, so losing
    // one costs its share: one channel of 12 (the most per socket on current
    // x86 server CPUs) is 8.3% of the node's peak, one of 8 is 12.5%. 0.08
    // is under the smallest of those shares, so a lost channel fires on any
    // of them (one of 12 only just: it fires on a share of the medians),
    // and over 4 standard deviations of a healthy peak ratio above 0
    // (figures vary ~2-3%; median of 5 over a baseline of 15: 1.25-1.9%).
    // A link's peak (a remote pair) falls the same way when the link loses
    // lanes or trains slower (docs/detection.md, "The peak bandwidth alert").
    peakBandwidthDropThreshold: 0.08,
    // Once over the threshold, NumaProbePeakBandwidthDrop holds while the
    // drop stays over peakBandwidthHoldThreshold, until it falls under that
    // or peakBandwidthHoldWindow after the last median over the threshold
    // (a hysteresis): a lost channel of 12 sits 0.3% beyond 0.08, so its
    // medians cross back and forth, and unheld the alert resolves and fires
    // again within the week in 83% of the cases; held, in 5%, at the same
    // healthy false alarms (bench/peak_band.py --hold 0.04 48;
    // docs/detection.md, "The peak bandwidth alert").
    peakBandwidthHoldThreshold: 0.04,
    peakBandwidthHoldWindow: '48h',
    // The drift alerts: how long the recent median must stay beyond the
    // threshold. No longer hold: the daemon confirms a suspicious figure with
    // 4 more runs next, so the median already stands on fresh figures.
    driftFor: '5m',

    // NumaProbeInterleaveWeightsCostBandwidth: the share of an interleaved
    // allocation's bandwidth the kernel's weights leave unused against the
    // measured weights' (numaprobe_interleave_bandwidth_ratio under 0.9), held
    // for two peak cycles (probes.peak_bandwidth.interval, 6h) so that one odd
    // peak run, which stands until the pair's next run, cannot fire it.
    interleaveLossThreshold: 0.10,
    interleaveFor: '12h',

    // NumaProbeRemoteLocalRatioOutlier: distance from the cohort median, as a
    // fraction, both ways; the cohort is the host and its same-CPU peers and
    // must have at least peerCohortMin members.
    peerRatioThreshold: 0.08,
    peerCohortMin: 5,
    // How long the deviation must hold: peerFor, or peerLongFor on hosts
    // whose refresh interval is above peerLongRefreshSeconds. The daemon's
    // ratio is of medians of 9 figures, which on 30-minute rounds stay off
    // for hours on noise alone; the longer hold keeps 8-node hosts with long
    // rounds quiet (bench/peer_thresholds.py, docs/detection.md, "Choosing
    // the peer alert's hold").
    peerFor: '1h',
    peerLongRefreshSeconds: 600,
    peerLongFor: '2h',

    topologyChangedFor: '5m',

    // NumaProbeProbesFailing: failed share of runs over failingWindow, from
    // run rates recorded over probeRunsRateWindow (at least two scrapes).
    probeFailingRatio: 0.25,
    probeRunsRateWindow: '5m',
    probeFailingWindow: '1h',
    probeFailingFor: '30m',

    // NumaProbeProbeStale: last success older than this many refresh intervals.
    staleRefreshIntervals: 3,
    staleFor: '10m',

    // NumaProbePlacementFailures: a failure in every placementWindow.
    placementWindow: '30m',
    placementFor: '1h',

    // NumaProbeDutyCycleOverBudget: probe CPU over this multiple of the budget.
    dutyCycleBudgetFactor: 1.25,
    dutyCycleFor: '30m',

    // NumaProbeBaselineNotArmed: series still record their baseline after
    // this many times the recording the daemon's schedule predicts
    // (numaprobe_baseline_expected_armed_timestamp_seconds), for this long.
    baselineArmFactor: 2,
    baselineArmFor: '30m',

    // NumaProbeUncorrectedMemoryErrors: the count is no noise (EDAC counts
    // real events), held only over one more evaluation.
    memoryErrorsFor: '1m',
    // NumaProbeStateNotWritten: the state file unwritten for longer than
    // this, which is twice the daemon's 30-s save interval (its writes are
    // retried every 5 s after a failure).
    stateWriteFor: '1m',

    // NumaProbeNodeFeaturesNotWritten: the feature file unwritten for
    // longer than this (retried every 30 s), well within the 3 refresh
    // intervals after which NFD drops its labels.
    nodeFeaturesWriteFor: '5m',

    configReloadFor: '10m',
    exporterDownFor: '15m',
    exporterAbsentFor: '15m',

    // Counters that move once per probe round (runs, probe CPU seconds) are
    // read over this window on the dashboards: it spans at least two rounds at
    // the longest refresh interval (30 min), so a rate does not spike when one
    // round lands in a short window.
    roundCounterWindow: '1h',
    // The peak bandwidth probe runs once every probes.peak_bandwidth.interval
    // (6 h by default), not every round: the host dashboard counts its runs
    // over this window, so a cycle's runs stay in view until the next one.
    peakCounterWindow: '6h',

    // Fleet dashboard: worst-k tables list at most this many rows.
    fleetTopK: 20,

    // Derived from the values above; not meant to be overridden.
    // The labels that identify one scrape target in `on(...)` and `by(...)`.
    instanceLabels: std.join(', ', (if self.clusterLabel != '' then [self.clusterLabel] else []) + ['instance', 'job']),
    // The labels that identify one Prometheus job (the scope of a cohort).
    jobLabels: std.join(', ', (if self.clusterLabel != '' then [self.clusterLabel] else []) + ['job']),
    // The probes whose staleness is judged against the host's refresh
    // interval (NumaProbeProbeStale, the stale panels): those of the rounds.
    // Not peak_bandwidth, which runs on a schedule of its own in hours
    // (probes.peak_bandwidth.interval, 6 h by default) and skips a node
    // whose CPUs are busy: its skipped runs (numaprobe_probe_runs_total
    // result="skipped") and the host dashboard's peak row show how it keeps up.
    roundProbes: 'probe!="peak_bandwidth"',
    // What makes hosts peers: the CPU model and the NUMA topology (node count
    // and the sum of the SLIT distances; recorded by instance:numaprobe_host_info:cohort).
    cohortLabels: 'cpu_model, numa_nodes, numa_distance_sum',
  },
}
