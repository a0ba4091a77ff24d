// SPDX-License-Identifier: Apache-2.0
// numaprobe as a monitoring mixin: the recording rules, the alerts and the
// dashboards from one source, tuned by _config (config.libsonnet).
//
//   local numaprobe = (import 'mixin.libsonnet') + { _config+:: { selector: 'job="numa"' } };
//   numaprobe.prometheusRules, numaprobe.prometheusAlerts, numaprobe.grafanaDashboards
//
// The committed rules/*.yaml and dashboards/*.json are this file's output with
// the default _config (generate.py writes them).
(import 'config.libsonnet') +
(import 'rules/recording.libsonnet') +
(import 'rules/alerts.libsonnet') +
(import 'dashboards/host.libsonnet') +
(import 'dashboards/fleet.libsonnet')
