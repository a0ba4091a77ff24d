// SPDX-License-Identifier: Apache-2.0
// numaprobe alerting rules. Thresholds and `for:` durations come from
// _config (config.libsonnet); what to do when an alert fires is in
// docs/runbook.md, one section per alert (runbook_url points there). One rule
// pages (severity critical): NumaProbeUncorrectedMemoryErrors, memory that
// lost data, so the host is to be drained. The others are warnings: a NUMA
// performance drift degrades a host, it does not take it down; route warnings
// to a ticket queue.
//
// The drift and staleness alerts read the daemon's per-host summaries; the
// peer alert reads recording rules (recording.libsonnet): load both files
// into the same Prometheus.
local pairDrift = import '../pair_drift.libsonnet';
local pairPeers = import '../pair_peers.libsonnet';

{
  prometheusAlerts+:: {
    local c = $._config,
    // A description is written over several lines here and published as one
    // (the lines joined by spaces, like a YAML folded scalar).
    local fold(text) = std.join(' ', std.split(std.rstripChars(text, '\n'), '\n')),
    // What changed on the host since its baseline was recorded, for the drift
    // alerts: "since kernel 6.1 -> 6.6, ... (first seen ...)" or "no host change".
    local hostChanges = |||
      {{- with printf "numaprobe_host_change_timestamp_seconds{instance=%q,job=%q}" $labels.instance $labels.job | query | sortByLabel "field" }}
      since {{ range $i, $c := . }}{{ if $i }}, {{ end }}{{ $c.Labels.field }} {{ $c.Labels.before }} -> {{ $c.Labels.after }}{{ end }}
      (first seen {{ (. | first | value) | humanizeTimestamp }}){{ else }}; no host change since the baseline was recorded{{ end }}.
    |||,
    // What Alertmanager groups a fleet rollout's drift alerts by
    // (grafana/alertmanager.yml): the host's CPU model and its newest host
    // change, from instance:numaprobe_host_info:rollout. The hosts of one
    // model that drift after one rollout are then one notification, not one
    // per host, and another change on the same model is another. Not the
    // kernel, microcode or firmware label of numaprobe_host_info: at the
    // change that series overlaps its predecessor for minutes in promtool
    // and VictoriaMetrics (no staleness markers), and the alert's labels
    // would flip between the two; topk keeps the newer rollout series. A
    // host without one keeps its alert, without the labels. `series`: the
    // labels that tell the alert's series apart (op for bandwidth).
    local withRollout(expr, series) = |||
      (
        %(expr)s
      ) * on(%(instanceLabels)s) group_left(cpu_model, change) (topk by (%(instanceLabels)s) (1, instance:numaprobe_host_info:rollout) * 0 + 1)
      or on(%(series)s) (
        %(expr)s
      )
    ||| % (c { expr: std.rstripChars(expr, '\n'), series: series }),
    // The pairs a description's query found, at most 8 and then how many in
    // all, each with its value as a percentage after `sign`.
    local pairList(sign) =
      '{{ range $i, $p := . }}{{ if lt $i 8 }}{{ if $i }}, {{ end }}{{ $p.Labels.cpu_node }} -> {{ $p.Labels.mem_node }} (%s{{ $p.Value | humanizePercentage }}){{ end }}{{ end }}{{ if gt (len .) 8 }} ({{ len . }} in all){{ end }}.' % sign,
    // Gives every alert its severity (warning unless the rule says another),
    // runbook link and dashboard link: the host dashboard at the alert's
    // host, or the fleet dashboard for an alert that names no host (hidden
    // field `dashboard:: 'fleet'`).
    local alert(rule) = rule {
      labels: { severity: 'warning' } + (if std.objectHas(rule, 'labels') then rule.labels else {}),
      annotations+: {
        runbook_url: c.runbookURLPattern % std.asciiLower(rule.alert),
        dashboard_url: if std.objectHasAll(rule, 'dashboard') && rule.dashboard == 'fleet'
        then c.fleetDashboardURL else c.hostDashboardURL,
      },
    },

    groups+: [
      {
        name: 'numaprobe-drift',
        rules: std.map(alert, [
          {
            alert: 'NumaProbeLatencyDrift',
            // Compares the recent median (the median of a pair's last 5
            // figures, so two outlier figures cannot move it) with the stored
            // baseline, which no kernel, microcode, firmware or numaprobe
            // upgrade replaces. A figure beyond its band makes the daemon
            // measure the pair 4 more times at once (confirmation runs), so
            // the median stands on fresh figures within minutes at any
            // refresh interval: no hold, one rule for every host. Threshold
            // +6%: 4.8 standard deviations of a healthy ratio at 2% figure
            // noise, 3.2 below a +10% step (docs/detection.md).
            //
            // Per host: the daemon exports its worst pair's ratio, so this
            // reads one series a host instead of every pair's recent median
            // and baseline (over 1 s a minute at 1,000 8-node hosts,
            // docs/detection.md). The description names the drifted pairs
            // from the one host's series (pairDrift), read while it fires.
            expr: withRollout(|||
              last_over_time(numaprobe_memory_latency_worst_pair_drift_ratio{%(selector)s}[%(gapWindow)s]) - 1 > %(latencyDriftThreshold)g
            ||| % c, c.instanceLabels),
            'for': c.driftFor,
            annotations: {
              summary: 'Memory latency of a NUMA node pair has risen above its baseline.',
              description: fold(|||
                Memory latency on {{ $labels.instance }} has risen above its baseline: the worst
                node pair is +{{ $value | humanizePercentage }} (median of the last 5 figures)
                %(hostChanges)s
                {{- with printf "%(pairs)s" $labels.instance $labels.job $labels.instance $labels.job | query | sortByLabel "mem_node" | sortByLabel "cpu_node" }}
                Pairs over +%(threshold)s (CPU node -> memory node): %(list)s{{ end }}
              ||| % {
                hostChanges: hostChanges,
                pairs: pairDrift.latency('instance=%q,job=%q', c.gapWindow) + ' - 1 > %g' % c.latencyDriftThreshold,
                threshold: '%g%%' % (c.latencyDriftThreshold * 100),
                list: pairList('+'),
              }),
            },
          },
          {
            alert: 'NumaProbeBandwidthDrop',
            // The same comparison for bandwidth, which is noisier: -13%
            // (docs/detection.md: 4% figure noise), per host and op.
            expr: withRollout(|||
              1 - last_over_time(numaprobe_memory_bandwidth_worst_pair_drift_ratio{%(selector)s}[%(gapWindow)s]) > %(bandwidthDropThreshold)g
            ||| % c, c.instanceLabels + ', op'),
            'for': c.driftFor,
            annotations: {
              summary: 'Memory bandwidth of a NUMA node pair has dropped below its baseline.',
              description: fold(|||
                {{ $labels.op }} bandwidth on {{ $labels.instance }} has dropped below its
                baseline: the worst node pair is -{{ $value | humanizePercentage }} (median of the last 5 figures)
                %(hostChanges)s
                {{- with printf "%(pairs)s" $labels.instance $labels.job $labels.op $labels.instance $labels.job $labels.op | query | sortByLabel "mem_node" | sortByLabel "cpu_node" }}
                Pairs under -%(threshold)s (CPU node -> memory node): %(list)s{{ end }}
              ||| % {
                hostChanges: hostChanges,
                pairs: '1 - (' + pairDrift.bandwidth('instance=%q,job=%q,op=%q', c.gapWindow) + ') > %g' % c.bandwidthDropThreshold,
                threshold: '%g%%' % (c.bandwidthDropThreshold * 100),
                list: pairList('-'),
              }),
            },
          },
          {
            alert: 'NumaProbePeakBandwidthDrop',
            // The same comparison for the node's peak (probes.peak_bandwidth:
            // every CPU of a node streaming to its own memory or, per node
            // distance, to one remote node's, read and write), per host and
            // op. The peak is the sum of the node's memory channels (or a
            // link's width), so a lost channel shows as its share: -8% is
            // under one channel of 12, 8.3% (config.libsonnet). Its figures
            // come hours apart, but a figure more than 8% under its
            // baseline is confirmed by 4 runs at once, as for the other
            // kinds, and the daemon's summary is exported between runs: the
            // same last_over_time and `for:` as the other drift alerts.
            // The second clause is a hysteresis: once over the threshold it
            // holds while the drop stays over peakBandwidthHoldThreshold,
            // until the drop falls under that (recorded crossing and recovery
            // times, recording.libsonnet), for at most peakBandwidthHoldWindow
            // after the last crossing. A lost channel of 12 sits just beyond
            // the threshold and would otherwise resolve and fire again all week.
            expr: withRollout(|||
              1 - last_over_time(numaprobe_memory_peak_bandwidth_worst_pair_drift_ratio{%(selector)s}[%(gapWindow)s]) > %(peakBandwidthDropThreshold)g
              or
              1 - last_over_time(numaprobe_memory_peak_bandwidth_worst_pair_drift_ratio{%(selector)s}[%(gapWindow)s]) > %(peakBandwidthHoldThreshold)g
                and
              max_over_time(instance_op:numaprobe_memory_peak_bandwidth_drop_crossed:time{%(selector)s}[%(peakBandwidthHoldWindow)s])
                > (
                  max_over_time(instance_op:numaprobe_memory_peak_bandwidth_drop_recovered:time{%(selector)s}[%(peakBandwidthHoldWindow)s])
                  or max_over_time(instance_op:numaprobe_memory_peak_bandwidth_drop_crossed:time{%(selector)s}[%(peakBandwidthHoldWindow)s]) * 0
                )
            ||| % c, c.instanceLabels + ', op'),
            'for': c.driftFor,
            annotations: {
              summary: 'Peak memory bandwidth of a NUMA node or link has dropped below its baseline.',
              description: fold(|||
                Peak {{ $labels.op }} bandwidth (all CPUs of a node streaming at once) on {{ $labels.instance }}
                has dropped below its baseline: the worst node pair is -{{ $value | humanizePercentage }}
                (median of the last 5 figures)
                {{- if le $value %(drop)g }}, held: it was over -%(threshold)s within the last %(window)s and has not been back above -%(hold)s since{{ end }}
                %(hostChanges)s
                {{- with printf "%(pairs)s" $labels.instance $labels.job $labels.op $labels.instance $labels.job $labels.op | query | sortByLabel "mem_node" | sortByLabel "cpu_node" }}
                Pairs under -%(hold)s (CPU node -> memory node): %(list)s{{ end }}
              ||| % {
                hostChanges: hostChanges,
                pairs: '1 - (' + pairDrift.peak('instance=%q,job=%q,op=%q', c.gapWindow) + ') > %g' % c.peakBandwidthHoldThreshold,
                drop: c.peakBandwidthDropThreshold,
                window: c.peakBandwidthHoldWindow,
                hold: '%g%%' % (c.peakBandwidthHoldThreshold * 100),
                threshold: '%g%%' % (c.peakBandwidthDropThreshold * 100),
                list: pairList('-'),
              }),
            },
          },
          {
            alert: 'NumaProbeInterleaveWeightsCostBandwidth',
            // The kernel's weighted-interleave weights against those its own
            // rule gives each node's measured peak bandwidth from its nearest
            // CPU node (docs/measurement.md, "Interleave weights from measured
            // bandwidth"): the ratio is the interleaved bandwidth with the
            // kernel's weights over that with the measured_nearest ones, on
            // the CPU node's measured figures. Not a drift: the firmware's
            // figures are not the hardware's (a down-trained CXL link), a
            // hand-set vector no longer fits, or the memory changed. A
            // symmetric host whose kernel weights are its rule's on true
            // figures reads 1, however a single socket would do better.
            // Each figure behind it stands until its pair's next peak run,
            // hours later, so one odd run could hold it under the threshold
            // for a cycle: interleaveFor spans two peak cycles.
            expr: |||
              1 - last_over_time(numaprobe_interleave_bandwidth_ratio{%(selector)s}[%(gapWindow)s]) > %(interleaveLossThreshold)g
            ||| % c,
            'for': c.interleaveFor,
            annotations: {
              summary: "The kernel's interleave weights leave memory bandwidth unused.",
              description: fold(|||
                On {{ $labels.instance }}, an interleaved allocation (MPOL_WEIGHTED_INTERLEAVE) from CPU node
                {{ $labels.cpu_node }} would leave {{ $value | humanizePercentage }} of its bandwidth unused with the
                kernel's weights, against the weights its own rule gives the measured peak bandwidth
                {{- with printf "numaprobe_interleave_weight{instance=%q,job=%q,cpu_node=%q,source=%q}" $labels.instance $labels.job $labels.cpu_node "kernel" | query | sortByLabel "mem_node" }}
                (kernel: {{ range $i, $w := . }}{{ if $i }}, {{ end }}node {{ $w.Labels.mem_node }} {{ $w.Value }}{{ end }}{{ end }}
                {{- with printf "numaprobe_interleave_weight{instance=%q,job=%q,cpu_node=%q,source=%q}" $labels.instance $labels.job $labels.cpu_node "measured_nearest" | query | sortByLabel "mem_node" }};
                measured: {{ range $i, $w := . }}{{ if $i }}, {{ end }}node {{ $w.Labels.mem_node }} {{ $w.Value }}{{ end }}){{ end }}.
                `numaprobe probe --tests peak_bandwidth` prints the lines that would set them.
              |||),
            },
          },
          {
            alert: 'NumaProbeTopologyChanged',
            // The daemon found another node count, other SLIT distances or
            // another SNC/NPS mode: the old pairs mean nothing any more, so it
            // recorded a new baseline (origin topology_changed) and drift is
            // measured against that. Stays until an operator runs `numaprobe
            // baseline accept` (origin accepted) or `reset`. The `unless` ends
            // it at the first scrape after that; last_over_time carries it
            // over scrape gaps.
            expr: |||
              max without(fingerprint) (last_over_time(numaprobe_baseline_info{%(selector)s, origin="topology_changed"}[%(gapWindow)s]))
              unless on(%(instanceLabels)s) numaprobe_baseline_info{%(selector)s, origin!="topology_changed"}
            ||| % c,
            'for': c.topologyChangedFor,
            annotations: {
              summary: 'The NUMA topology of a host changed and numaprobe recorded a new baseline.',
              description: fold(|||
                The NUMA topology of {{ $labels.instance }} changed (node count, SLIT distances
                or SNC/NPS mode); numaprobe measures drift against a new baseline since then
                {{- with printf "numaprobe_host_change_timestamp_seconds{instance=%q,job=%q}" $labels.instance $labels.job | query | sortByLabel "field" }}
                (host changes seen: {{ range $i, $c := . }}{{ if $i }}, {{ end }}{{ $c.Labels.field }} {{ $c.Labels.before }} -> {{ $c.Labels.after }}{{ end }}){{ end }}.
                Compare the topology with its peers, then acknowledge with `numaprobe baseline accept`.
              |||),
            },
          },
        ]),
      },
      // The peer alert reads each host's recorded largest deviation from its
      // peers (numaprobe-peer-deviation): one series a host. Two rules, as a
      // `for:` cannot depend on the series: one for hosts whose refresh
      // interval is at most peerLongRefreshSeconds, one, held longer, for the
      // others. Their `hold` label keeps them two distinct rules (as
      // kubernetes-mixin's severities do for one alert written twice) and
      // tells the operator which one fired.
      {
        name: 'numaprobe-peers',
        local peerAlert(hold, refresh) = {
          alert: 'NumaProbeRemoteLocalRatioOutlier',
          // Both directions: a ratio far below the peers' is as suspicious as
          // one above (memory silently landing on the local node looks
          // "fast"). Only pairs whose cohort has at least peerCohortMin hosts
          // (the host and 4 peers of the same job, CPU model and topology)
          // have a peer median, so it stands on healthy hosts even if two are
          // off. Per host: some pair out of line for the whole of `for:`; the
          // description names the pairs out of line now, from the one host's
          // ratios, read while it fires.
          expr: |||
            instance:numaprobe_memory_latency_recent_remote_local_ratio:peer_deviation_max > %(threshold)g
            and on(%(instanceLabels)s) instance:numaprobe_refresh_interval_seconds:last %(refresh)s
          ||| % { threshold: c.peerRatioThreshold, instanceLabels: c.instanceLabels, refresh: refresh },
          'for': hold,
          labels+: { hold: hold },
          annotations: {
            summary: "A host's remote/local memory latency ratio is out of line with same-CPU peers.",
            description: fold(|||
              The remote/local latency ratio of the peer medians (of the last 9 figures) on {{ $labels.instance }}
              ({{ $labels.cpu_model }}, {{ $labels.numa_nodes }} nodes) has differed from the median of
              its peers with the same CPU model and topology by more than %(threshold)s for %(for)s;
              now by up to {{ $value | humanizePercentage }}.
              {{- with printf "%(pairs)s" $labels.instance $labels.job $labels.instance $labels.job | query | sortByLabel "mem_node" | sortByLabel "cpu_node" }}
              Pairs beyond ±%(threshold)s of their peers (CPU node -> memory node): %(list)s{{ end }}
            ||| % {
              threshold: '%g%%' % (c.peerRatioThreshold * 100),
              'for': hold,
              pairs: local deviation = pairPeers.deviation(c, 'instance=%q,job=%q', window=c.gapWindow);
                    '(%s) > %g or (%s) < -%g' % [deviation, c.peerRatioThreshold, deviation, c.peerRatioThreshold],
              list: pairList(''),
            }),
          },
        },
        rules: std.map(alert, [
          peerAlert(c.peerFor, '<= %g' % c.peerLongRefreshSeconds),
          peerAlert(c.peerLongFor, '> %g' % c.peerLongRefreshSeconds),
        ]),
      },
      {
        name: 'numaprobe-health',
        rules: std.map(alert, [
          {
            alert: 'NumaProbeProbesFailing',
            // The failed share of the runs a probe made over the window: the
            // average of the recorded failed-run rate over the average of the
            // recorded run rate (numaprobe-probe-runs in recording.libsonnet,
            // which says which results count as failed and that skipped runs,
            // never made, count in neither).
            expr: |||
              avg_over_time(instance_probe:numaprobe_probe_runs_failed:rate%(probeRunsRateWindow)s{%(selector)s}[%(probeFailingWindow)s])
              /
              avg_over_time(instance_probe:numaprobe_probe_runs:rate%(probeRunsRateWindow)s{%(selector)s}[%(probeFailingWindow)s])
              > %(probeFailingRatio)g
            ||| % c,
            'for': c.probeFailingFor,
            annotations: {
              summary: 'A numaprobe probe keeps failing.',
              description: fold(|||
                {{ $value | humanizePercentage }} of the {{ $labels.probe }} probe runs on
                {{ $labels.instance }} failed in the last hour; see
                numaprobe_probe_runs_total for the result.
              |||),
            },
          },
          {
            alert: 'NumaProbePlacementFailures',
            // Fires when placement keeps failing (every placementWindow for
            // placementFor), not on a one-off failure.
            expr: |||
              increase(numaprobe_placement_failures_total{%(selector)s}[%(placementWindow)s]) > 0
            ||| % c,
            'for': c.placementFor,
            annotations: {
              summary: 'numaprobe cannot place or verify probe memory on a NUMA node.',
              description: fold(|||
                Probe memory on {{ $labels.instance }} keeps failing placement on memory
                node {{ $labels.mem_node }} (reason {{ $labels.reason }}); pairs with that
                node are not measured.
              |||),
            },
          },
          {
            alert: 'NumaProbeDutyCycleOverBudget',
            // last_over_time: a failed scrape does not restart the `for:`.
            expr: |||
              last_over_time(numaprobe_duty_cycle_ratio{%(selector)s}[5m])
              > %(dutyCycleBudgetFactor)g * last_over_time(numaprobe_duty_cycle_budget_ratio{%(selector)s}[5m])
            ||| % c,
            'for': c.dutyCycleFor,
            annotations: {
              summary: 'numaprobe probes use more CPU than their configured budget.',
              description: fold(|||
                numaprobe on {{ $labels.instance }} spent {{ $value | humanizePercentage }}
                of one CPU on probes over the trailing 10 minutes, against a budget of
                {{ with printf "numaprobe_duty_cycle_budget_ratio{instance=%q,job=%q}" $labels.instance $labels.job | query }}{{ . | first | value | humanizePercentage }}{{ end }}.
              |||),
            },
          },
          {
            alert: 'NumaProbeBaselineNotArmed',
            // The daemon says when its schedule expects every planned series
            // armed: each recording series' start plus baseline.rounds of its
            // refresh intervals (numaprobe topology --config.file previews
            // it). Recording for baselineArmFactor times that long means its
            // figures are not coming: probes failing or disturbed, a budget
            // too small for the plan. The value is how many series record.
            expr: |||
              last_over_time(numaprobe_baseline_series{state="recording",%(selector)s}[%(gapWindow)s]) > 0
              and on(%(instanceLabels)s)
              (
                time() - last_over_time(numaprobe_baseline_recording_since_timestamp_seconds{%(selector)s}[%(gapWindow)s])
                > %(baselineArmFactor)g * (
                  last_over_time(numaprobe_baseline_expected_armed_timestamp_seconds{%(selector)s}[%(gapWindow)s])
                  - last_over_time(numaprobe_baseline_recording_since_timestamp_seconds{%(selector)s}[%(gapWindow)s])
                )
              )
            ||| % c,
            'for': c.baselineArmFor,
            annotations: {
              summary: 'numaprobe has not armed its baseline in the time its schedule predicts.',
              description: fold(|||
                {{ $value }} series on {{ $labels.instance }} still record their baseline,
                {{ with printf "numaprobe_baseline_recording_progress_ratio{instance=%%q,job=%%q}" $labels.instance $labels.job | query }}{{ . | first | value | humanizePercentage }}{{ end }}
                of the figures recorded, more than %(baselineArmFactor)g times as long as the schedule
                predicted; their drift alerts are not armed. See numaprobe_probe_runs_total for
                failing probes.
              ||| % c),
            },
          },
          {
            alert: 'NumaProbeUncorrectedMemoryErrors',
            // EDAC counted uncorrected errors on the host since its baseline
            // was recorded (the daemon's count from the controllers' ue_count,
            // per type). Memory lost data: the host is drained, not watched,
            // hence the page. Ends when the count is 0 again: after a reboot
            // (the counters start over) or `numaprobe baseline accept` /
            // `reset`. last_over_time: a failed scrape does not resolve it.
            expr: |||
              last_over_time(numaprobe_host_memory_errors_since_baseline{%(selector)s, type="uncorrected"}[%(gapWindow)s]) > 0
            ||| % c,
            'for': c.memoryErrorsFor,
            labels: { severity: 'critical' },
            annotations: {
              summary: 'A host has uncorrected memory errors.',
              description: fold(|||
                EDAC counted {{ $value }} uncorrected memory errors on {{ $labels.instance }}
                since its numaprobe baseline was recorded
                {{- with printf "numaprobe_host_memory_errors_since_baseline{instance=%q,job=%q,type=%q}" $labels.instance $labels.job "corrected" | query }}
                (and {{ . | first | value }} corrected){{ end }}; its memory lost data. Drain the host
                and replace the failing DIMM.
              |||),
            },
          },
          {
            alert: 'NumaProbeStateNotWritten',
            // The daemon writes its state file every 30 s while something
            // changed (kSaveSpacingNs) and retries a failed write every 5 s;
            // the gauge is 0 from the first failed attempt until one succeeds
            // (and while the file is unreadable, which is never written over).
            // Held for stateWriteFor (over one save interval): a write that
            // fails once and succeeds at its retry resolves before.
            // What was learnt since the last write is lost at a restart.
            expr: |||
              last_over_time(numaprobe_state_last_write_successful{%(selector)s}[5m]) == 0
            ||| % c,
            'for': c.stateWriteFor,
            annotations: {
              summary: 'numaprobe cannot write its state file.',
              description: fold(|||
                numaprobe on {{ $labels.instance }} has not written its state file for more than
                one save interval
                {{- with printf "numaprobe_state_write_failures_total{instance=%q,job=%q}" $labels.instance $labels.job | query }}
                ({{ . | first | value }} failed writes since it started){{ end }}; what it learnt since
                the last write (baselines, recent figures) is lost if it restarts. The daemon log names
                the path and the error.
              |||),
            },
          },
          {
            alert: 'NumaProbeNodeFeaturesNotWritten',
            // Only where node_feature_directory is set (the gauge is 1 while
            // it is not). A failed write is retried every 30 s; NFD drops the
            // labels three refresh intervals (15 min by default) after the
            // last write that worked, so this fires before they lapse.
            expr: |||
              last_over_time(numaprobe_node_features_last_write_successful{%(selector)s}[5m]) == 0
            ||| % c,
            'for': c.nodeFeaturesWriteFor,
            annotations: {
              summary: 'numaprobe cannot write its Node Feature Discovery feature file.',
              description: fold(|||
                numaprobe on {{ $labels.instance }} has not written its node feature file for over
                %(nodeFeaturesWriteFor)s
                {{- with printf "numaprobe_node_features_write_failures_total{instance=%%q,job=%%q}" $labels.instance $labels.job | query }}
                ({{ . | first | value }} failed writes since it started){{ end }}; NFD drops the node's
                numaprobe.io labels when the last file written expires, and pods that select on them no
                longer schedule there. The daemon log names the path and the error.
              ||| % c),
            },
          },
          {
            alert: 'NumaProbeConfigReloadFailed',
            expr: |||
              last_over_time(numaprobe_config_last_reload_successful{%(selector)s}[5m]) == 0
            ||| % c,
            'for': c.configReloadFor,
            annotations: {
              summary: 'numaprobe could not reload its configuration.',
              description: fold(|||
                The last configuration reload of numaprobe on {{ $labels.instance }} failed;
                it keeps running with the previous configuration.
              |||),
            },
          },
          {
            alert: 'NumaProbeExporterDown',
            expr: |||
              up{%(selector)s} == 0
            ||| % c,
            'for': c.exporterDownFor,
            annotations: {
              summary: 'Prometheus cannot scrape numaprobe on a host.',
              description: fold(|||
                Prometheus has failed to scrape {{ $labels.job }} target
                {{ $labels.instance }} for more than 15 minutes; its NUMA measurements
                are missing.
              |||),
            },
          },
          {
            alert: 'NumaProbeExporterAbsent',
            dashboard:: 'fleet',
            // Catches what ExporterDown cannot: service discovery dropping
            // every target. It cannot name a host. An explicit 5-minute
            // window, not absent()'s lookback: engines differ in how long an
            // instant selector finds a target that is gone (vmalert's saw it
            // 4 minutes less than Prometheus'), a window is the same everywhere.
            expr: |||
              absent_over_time(up{%(selector)s}[5m])
            ||| % c,
            'for': c.exporterAbsentFor,
            annotations: {
              summary: 'Prometheus has no numaprobe scrape target at all.',
              description: fold(|||
                No target of a job matching numaprobe.* has been discovered for more than
                15 minutes{{ with $externalLabels.cluster }} in cluster {{ . }}{{ end }};
                service discovery or the scrape configuration lost numaprobe.
              |||),
            },
          },
          {
            alert: 'NumaProbeProbeStale',
            // Judged against the host's own schedule: the daemon exports the
            // expected time between two figures of one series
            // (numaprobe_refresh_interval_seconds: 300 s at the default 5 min
            // rounds, 1800 s when a big plan stretches rounds to 30 min). A
            // healthy series is at most ~1.2 intervals old (jitter), ~2.4
            // after one missed round; older than 3 intervals for 10 more
            // minutes means it is not being refreshed. Per host and probe:
            // the daemon exports each probe's oldest last success, so this
            // reads one series a probe, not every pair's timestamp (164 a
            // host on 8 nodes: over 2 s a minute at 1,000 hosts,
            // docs/detection.md); the description then names the stale
            // pairs of the one host, read only while the alert is active.
            // last_over_time rides over failed scrapes; the value is the age.
            // Only the probes of the rounds (roundProbes): peak_bandwidth
            // runs on a schedule of its own in hours, so 3 refresh intervals
            // (15 min at 5-min rounds) say nothing about it; its skipped runs
            // and the host dashboard's peak row show how it keeps up.
            expr: |||
              time() - last_over_time(numaprobe_probe_oldest_success_timestamp_seconds{%(selector)s, %(roundProbes)s}[%(gapWindow)s])
              > on(%(instanceLabels)s) group_left()
                %(staleRefreshIntervals)g * instance:numaprobe_refresh_interval_seconds:last
            ||| % c,
            'for': c.staleFor,
            annotations: {
              summary: 'A numaprobe measurement has not been refreshed for more than three refresh intervals.',
              // The pairs: at most 8 named, then how many more.
              description: fold(|||
                The {{ $labels.probe }} probe on {{ $labels.instance }} has pairs that last
                succeeded up to {{ $value | humanizeDuration }} ago
                {{- with printf "instance:numaprobe_refresh_interval_seconds:last{instance=%%q,job=%%q}" $labels.instance $labels.job | query }}
                (expected every {{ . | first | value | humanizeDuration }}){{ end }}; their published values are stale
                {{- with printf "last_over_time(numaprobe_probe_last_success_timestamp_seconds{instance=%%q,job=%%q,probe=%%q}[%(gapWindow)s]) < on(%(instanceLabels)s) group_left() time() - %(staleRefreshIntervals)g * instance:numaprobe_refresh_interval_seconds:last{instance=%%q,job=%%q}" $labels.instance $labels.job $labels.probe $labels.instance $labels.job | query | sortByLabel "mem_node" | sortByLabel "cpu_node" }}.
                Stale pairs (CPU node -> memory node): {{ range $i, $p := . }}{{ if lt $i 8 }}{{ if $i }}, {{ end }}{{ $p.Labels.cpu_node }} -> {{ $p.Labels.mem_node }}{{ end }}{{ end }}{{ if gt (len .) 8 }} ({{ len . }} in all){{ end }}{{ end }}.
              ||| % c),
            },
          },
        ]),
      },
    ],
  },
}
