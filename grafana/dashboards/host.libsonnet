{
  grafanaDashboards+:: {
    'numaprobe-host.json': {
      __inputs: [],
      __requires: [],
      annotations: {
        list: [
          {
            builtIn: 1,
            datasource: {
              type: 'grafana',
              uid: '-- Grafana --',
            },
            enable: true,
            hide: true,
            iconColor: 'rgba(0, 211, 255, 1)',
            name: 'Annotations & Alerts',
            type: 'dashboard',
          },
          {
            datasource: {
              type: 'prometheus',
              uid: '${datasource}',
            },
            enable: true,
            hide: false,
            iconColor: 'orange',
            name: 'Host changes',
            expr: 'max by (field, before, after) (numaprobe_host_change_timestamp_seconds{job=~"$job",instance=~"$instance"}) * 1000',
            step: '5m',
            titleFormat: '{{field}} changed',
            textFormat: '{{before}} -> {{after}}',
            tagKeys: 'field',
            useValueForTime: true,
          },
        ],
      },
      description: 'NUMA memory latency, bandwidth and core-to-core latency of one host, measured by numaprobe.',
      editable: false,
      fiscalYearStartMonth: 0,
      graphTooltip: 1,
      id: null,
      uid: 'numaprobe-host',
      title: 'numaprobe / Host',
      tags: [
        'numaprobe',
        'numa',
      ],
      links: [
        {
          type: 'dashboards',
          tags: [
            'numaprobe',
          ],
          asDropdown: false,
          includeVars: true,
          keepTime: true,
          targetBlank: false,
          title: 'numaprobe',
          icon: 'external link',
        },
      ],
      liveNow: false,
      panels: [
        {
          type: 'row',
          id: 1,
          title: 'Overview',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 0,
          },
          panels: [],
        },
        {
          type: 'table',
          title: 'Host',
          description: 'CPU model, kernel, host fingerprint and numaprobe version of the selected instance (numaprobe_host_info, numaprobe_build_info).',
          fieldConfig: {
            defaults: {
              unit: 'none',
              custom: {
                align: 'auto',
                inspect: false,
                displayMode: 'auto',
                cellOptions: {
                  type: 'auto',
                },
              },
            },
            overrides: [],
          },
          options: {
            showHeader: true,
            cellHeight: 'sm',
            footer: {
              show: false,
            },
          },
          transformations: [
            {
              id: 'organize',
              options: {
                excludeByName: {
                  Time: true,
                  __name__: true,
                  Value: true,
                },
                renameByName: {},
              },
            },
          ],
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_host_info{job=~"$job",instance=~"$instance"} * on(instance, job) group_left(version, revision) numaprobe_build_info{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 2,
          gridPos: {
            h: 4,
            w: 24,
            x: 0,
            y: 1,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'stat',
          title: 'Worst remote/local latency ratio',
          description: 'Highest remote/local memory latency ratio over all node pairs of this host (1 = 100% on single-node hosts). Typical two-socket servers: 150-200%.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                ],
              },
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            colorMode: 'value',
            graphMode: 'none',
            textMode: 'auto',
            justifyMode: 'auto',
            orientation: 'auto',
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'instance:numaprobe_memory_latency_seconds:max_ratio_local{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
            },
          ],
          id: 3,
          gridPos: {
            h: 4,
            w: 6,
            x: 0,
            y: 5,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'stat',
          title: 'Worst latency drift from baseline',
          description: "Largest rise of a pair's recent median latency (median of its last 3 figures) over its stored baseline. NumaProbeLatencyDrift fires when the recent median (median of the last 3 figures) stays more than 5% over the baseline (20 min at refresh intervals up to 10 min, then 5 min).",
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                  {
                    color: 'orange',
                    value: 0.025,
                  },
                  {
                    color: 'red',
                    value: 0.05,
                  },
                ],
              },
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            colorMode: 'value',
            graphMode: 'none',
            textMode: 'auto',
            justifyMode: 'auto',
            orientation: 'auto',
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'max(instance_cpu_node_mem_node:numaprobe_memory_latency_recent_median_seconds:ratio_baseline{job=~"$job",instance=~"$instance"} - 1)',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
            },
          ],
          id: 4,
          gridPos: {
            h: 4,
            w: 6,
            x: 6,
            y: 5,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'stat',
          title: 'Oldest measurement',
          description: 'Time since the last successful probe of the least recently refreshed pair, per probe. NumaProbeProbeStale fires when it is older than 3 refresh intervals (numaprobe_refresh_interval_seconds) for 10 min.',
          fieldConfig: {
            defaults: {
              unit: 's',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                  {
                    color: 'orange',
                    value: 600,
                  },
                  {
                    color: 'red',
                    value: 900,
                  },
                ],
              },
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            colorMode: 'value',
            graphMode: 'none',
            textMode: 'auto',
            justifyMode: 'auto',
            orientation: 'auto',
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'max by (probe) (time() - numaprobe_probe_last_success_timestamp_seconds{job=~"$job",instance=~"$instance"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
              legendFormat: '{{probe}}',
            },
          ],
          id: 5,
          gridPos: {
            h: 4,
            w: 6,
            x: 12,
            y: 5,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'stat',
          title: 'Config reload',
          description: 'Whether the last configuration reload succeeded (numaprobe_config_last_reload_successful).',
          fieldConfig: {
            defaults: {
              unit: 'none',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'red',
                    value: null,
                  },
                  {
                    color: 'green',
                    value: 1,
                  },
                ],
              },
              mappings: [
                {
                  type: 'value',
                  options: {
                    '0': {
                      text: 'failed',
                      index: 0,
                    },
                    '1': {
                      text: 'ok',
                      index: 1,
                    },
                  },
                },
              ],
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            colorMode: 'value',
            graphMode: 'none',
            textMode: 'auto',
            justifyMode: 'auto',
            orientation: 'auto',
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_config_last_reload_successful{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
            },
          ],
          id: 6,
          gridPos: {
            h: 4,
            w: 6,
            x: 18,
            y: 5,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          id: 7,
          title: 'Memory latency',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 9,
          },
          panels: [],
        },
        {
          type: 'table',
          title: 'Latency matrix (cpu_node × mem_node)',
          description: 'Median memory latency of the last probe, rows = CPU node, columns = memory node. The diagonal is local memory.',
          fieldConfig: {
            defaults: {
              unit: 's',
              decimals: 3,
              color: {
                mode: 'continuous-GrYlRd',
              },
              custom: {
                align: 'center',
                displayMode: 'color-background',
                cellOptions: {
                  type: 'color-background',
                  mode: 'gradient',
                },
                inspect: false,
              },
            },
            overrides: [
              {
                matcher: {
                  id: 'byName',
                  options: 'cpu_node\\mem_node',
                },
                properties: [
                  {
                    id: 'custom.cellOptions',
                    value: {
                      type: 'auto',
                    },
                  },
                  {
                    id: 'custom.displayMode',
                    value: 'auto',
                  },
                  {
                    id: 'displayName',
                    value: 'cpu_node ↓ / mem_node →',
                  },
                ],
              },
            ],
          },
          options: {
            showHeader: true,
            cellHeight: 'sm',
            footer: {
              show: false,
            },
          },
          transformations: [
            {
              id: 'groupingToMatrix',
              options: {
                columnField: 'mem_node',
                rowField: 'cpu_node',
                valueField: 'Value',
                emptyValue: 'null',
              },
            },
          ],
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile without(cpu) (0.5, numaprobe_memory_latency_seconds{job=~"$job",instance=~"$instance"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 8,
          gridPos: {
            h: 8,
            w: 12,
            x: 0,
            y: 10,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Latency per pair',
          description: 'Latest figure per CPU node → memory node pair (thin), the recent median the alerts use (median of the last 3 figures, thick) and the stored baseline (dashed). Host changes (kernel, microcode, firmware, numaprobe version) are annotations.',
          fieldConfig: {
            defaults: {
              unit: 's',
              custom: {
                drawStyle: 'line',
                lineWidth: 1,
                fillOpacity: 10,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'none',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'off',
                },
              },
              color: {
                mode: 'palette-classic',
              },
            },
            overrides: [
              {
                matcher: {
                  id: 'byRegexp',
                  options: '^baseline .*',
                },
                properties: [
                  {
                    id: 'custom.lineStyle',
                    value: {
                      fill: 'dash',
                      dash: [
                        10,
                        10,
                      ],
                    },
                  },
                  {
                    id: 'custom.fillOpacity',
                    value: 0,
                  },
                ],
              },
              {
                matcher: {
                  id: 'byRegexp',
                  options: '^recent median .*',
                },
                properties: [
                  {
                    id: 'custom.lineWidth',
                    value: 2,
                  },
                  {
                    id: 'custom.fillOpacity',
                    value: 0,
                  },
                ],
              },
            ],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile without(cpu) (0.5, numaprobe_memory_latency_seconds{job=~"$job",instance=~"$instance"})',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{cpu_node}}→{{mem_node}}',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_memory_latency_baseline_seconds{job=~"$job",instance=~"$instance"}',
              refId: 'B',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'baseline {{cpu_node}}→{{mem_node}}',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile without(cpu) (0.5, numaprobe_memory_latency_recent_median_seconds{job=~"$job",instance=~"$instance"})',
              refId: 'C',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'recent median {{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 9,
          gridPos: {
            h: 8,
            w: 12,
            x: 12,
            y: 10,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Latency drift from baseline',
          description: 'Recent median / baseline − 1 per pair (solid) and latest figure / baseline − 1 (dashed). NumaProbeLatencyDrift fires when the recent median (median of the last 3 figures) stays more than 5% over the baseline (20 min at refresh intervals up to 10 min, then 5 min).',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              custom: {
                drawStyle: 'line',
                lineWidth: 1,
                fillOpacity: 10,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'none',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'dashed',
                },
              },
              color: {
                mode: 'palette-classic',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                  {
                    color: 'red',
                    value: 0.05,
                  },
                ],
              },
            },
            overrides: [
              {
                matcher: {
                  id: 'byRegexp',
                  options: '^figure .*',
                },
                properties: [
                  {
                    id: 'custom.lineStyle',
                    value: {
                      fill: 'dash',
                      dash: [
                        10,
                        10,
                      ],
                    },
                  },
                  {
                    id: 'custom.fillOpacity',
                    value: 0,
                  },
                ],
              },
            ],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'instance_cpu_node_mem_node:numaprobe_memory_latency_recent_median_seconds:ratio_baseline{job=~"$job",instance=~"$instance"} - 1',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{cpu_node}}→{{mem_node}}',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'instance_cpu_node_mem_node:numaprobe_memory_latency_seconds:ratio_baseline{job=~"$job",instance=~"$instance"} - 1',
              refId: 'B',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'figure {{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 10,
          gridPos: {
            h: 8,
            w: 12,
            x: 0,
            y: 18,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Remote/local latency ratio',
          description: 'Latency of each pair divided by the local latency of its CPU node, as exported by numaprobe (100% for the local pair).',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              custom: {
                drawStyle: 'line',
                lineWidth: 1,
                fillOpacity: 10,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'none',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'off',
                },
              },
              color: {
                mode: 'palette-classic',
              },
            },
            overrides: [],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'instance_cpu_node_mem_node:numaprobe_memory_latency_seconds:ratio_local{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 11,
          gridPos: {
            h: 8,
            w: 12,
            x: 12,
            y: 18,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Measured vs firmware (SLIT) remote/local ratio',
          description: 'Measured remote/local latency ratio (solid) against the firmware distance relative to the local distance, numaprobe_numa_distance / 10 (dashed). Firmware tables are coarse; a measured ratio moving while the firmware ratio stays is a real change.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              custom: {
                drawStyle: 'line',
                lineWidth: 1,
                fillOpacity: 10,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'none',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'off',
                },
              },
              color: {
                mode: 'palette-classic',
              },
            },
            overrides: [
              {
                matcher: {
                  id: 'byRegexp',
                  options: '^firmware .*',
                },
                properties: [
                  {
                    id: 'custom.lineStyle',
                    value: {
                      fill: 'dash',
                      dash: [
                        10,
                        10,
                      ],
                    },
                  },
                  {
                    id: 'custom.fillOpacity',
                    value: 0,
                  },
                ],
              },
            ],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'instance_cpu_node_mem_node:numaprobe_memory_latency_seconds:ratio_local{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'measured {{cpu_node}}→{{mem_node}}',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'instance_cpu_node_mem_node:numaprobe_numa_distance:ratio_local{job=~"$job",instance=~"$instance"}',
              refId: 'B',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'firmware {{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 12,
          gridPos: {
            h: 8,
            w: 12,
            x: 0,
            y: 26,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'bargauge',
          title: 'Remote pairs: measured / firmware ratio',
          description: 'Measured remote/local latency ratio divided by the firmware distance ratio, remote pairs only. Needs at least two NUMA nodes: empty on single-node hosts.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                ],
              },
              min: 0,
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            orientation: 'horizontal',
            displayMode: 'basic',
            showUnfilled: true,
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'instance_cpu_node_mem_node:numaprobe_memory_latency_seconds:ratio_local{job=~"$job",instance=~"$instance"} / on(instance, job, cpu_node, mem_node) group_left() instance_cpu_node_mem_node:numaprobe_numa_distance:ratio_local{job=~"$job",instance=~"$instance"} and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} > 10',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
              legendFormat: '{{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 13,
          gridPos: {
            h: 8,
            w: 6,
            x: 12,
            y: 26,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Latency spread (MAD / median)',
          description: 'Median absolute deviation of the samples of each probe relative to its median: the noise inside one figure. docs/detection.md has the round-to-round noise the thresholds are set from.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              custom: {
                drawStyle: 'line',
                lineWidth: 1,
                fillOpacity: 10,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'none',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'dashed',
                },
              },
              color: {
                mode: 'palette-classic',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                  {
                    color: 'orange',
                    value: 0.02,
                  },
                ],
              },
            },
            overrides: [],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile without(cpu) (0.5, numaprobe_memory_latency_spread_seconds{job=~"$job",instance=~"$instance"}) / quantile without(cpu) (0.5, numaprobe_memory_latency_seconds{job=~"$job",instance=~"$instance"})',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 14,
          gridPos: {
            h: 8,
            w: 6,
            x: 18,
            y: 26,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          id: 15,
          title: 'Memory bandwidth',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 34,
          },
          panels: [],
        },
        {
          type: 'table',
          title: 'Bandwidth matrix: $op',
          description: 'Bandwidth of the last probe for one operation, rows = CPU node, columns = memory node. Repeated for each value of the op variable.',
          fieldConfig: {
            defaults: {
              unit: 'Bps',
              color: {
                mode: 'continuous-RdYlGr',
              },
              custom: {
                align: 'center',
                displayMode: 'color-background',
                cellOptions: {
                  type: 'color-background',
                  mode: 'gradient',
                },
                inspect: false,
              },
            },
            overrides: [
              {
                matcher: {
                  id: 'byName',
                  options: 'cpu_node\\mem_node',
                },
                properties: [
                  {
                    id: 'custom.cellOptions',
                    value: {
                      type: 'auto',
                    },
                  },
                  {
                    id: 'custom.displayMode',
                    value: 'auto',
                  },
                  {
                    id: 'displayName',
                    value: 'cpu_node ↓ / mem_node →',
                  },
                ],
              },
            ],
          },
          options: {
            showHeader: true,
            cellHeight: 'sm',
            footer: {
              show: false,
            },
          },
          transformations: [
            {
              id: 'groupingToMatrix',
              options: {
                columnField: 'mem_node',
                rowField: 'cpu_node',
                valueField: 'Value',
                emptyValue: 'null',
              },
            },
          ],
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'max without(threads) (numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance",op=~"$op"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          repeat: 'op',
          repeatDirection: 'h',
          maxPerRow: 3,
          id: 16,
          gridPos: {
            h: 8,
            w: 8,
            x: 0,
            y: 35,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Bandwidth per pair',
          description: 'Bandwidth per operation and CPU node → memory node pair: latest figure (thin), recent median (median of the last 3 figures, thick) and stored baseline (dashed).',
          fieldConfig: {
            defaults: {
              unit: 'Bps',
              custom: {
                drawStyle: 'line',
                lineWidth: 1,
                fillOpacity: 10,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'none',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'off',
                },
              },
              color: {
                mode: 'palette-classic',
              },
            },
            overrides: [
              {
                matcher: {
                  id: 'byRegexp',
                  options: '^baseline .*',
                },
                properties: [
                  {
                    id: 'custom.lineStyle',
                    value: {
                      fill: 'dash',
                      dash: [
                        10,
                        10,
                      ],
                    },
                  },
                  {
                    id: 'custom.fillOpacity',
                    value: 0,
                  },
                ],
              },
              {
                matcher: {
                  id: 'byRegexp',
                  options: '^recent median .*',
                },
                properties: [
                  {
                    id: 'custom.lineWidth',
                    value: 2,
                  },
                  {
                    id: 'custom.fillOpacity',
                    value: 0,
                  },
                ],
              },
            ],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'max without(threads) (numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance",op=~"$op"})',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{op}} {{cpu_node}}→{{mem_node}}',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_memory_bandwidth_baseline_bytes_per_second{job=~"$job",instance=~"$instance",op=~"$op"}',
              refId: 'B',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'baseline {{op}} {{cpu_node}}→{{mem_node}}',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'max without(threads) (numaprobe_memory_bandwidth_recent_median_bytes_per_second{job=~"$job",instance=~"$instance",op=~"$op"})',
              refId: 'C',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'recent median {{op}} {{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 17,
          gridPos: {
            h: 8,
            w: 12,
            x: 0,
            y: 43,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Bandwidth drift from baseline',
          description: 'Recent median / baseline − 1 per pair and operation (solid) and latest figure / baseline − 1 (dashed). NumaProbeBandwidthDrop fires when the recent median stays more than 12% under the baseline (20 min at refresh intervals up to 10 min, then 5 min).',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              custom: {
                drawStyle: 'line',
                lineWidth: 1,
                fillOpacity: 10,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'none',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'dashed',
                },
              },
              color: {
                mode: 'palette-classic',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'red',
                    value: null,
                  },
                  {
                    color: 'green',
                    value: -0.12,
                  },
                ],
              },
            },
            overrides: [
              {
                matcher: {
                  id: 'byRegexp',
                  options: '^figure .*',
                },
                properties: [
                  {
                    id: 'custom.lineStyle',
                    value: {
                      fill: 'dash',
                      dash: [
                        10,
                        10,
                      ],
                    },
                  },
                  {
                    id: 'custom.fillOpacity',
                    value: 0,
                  },
                ],
              },
            ],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'instance_cpu_node_mem_node_op:numaprobe_memory_bandwidth_recent_median_bytes_per_second:ratio_baseline{job=~"$job",instance=~"$instance",op=~"$op"} - 1',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{op}} {{cpu_node}}→{{mem_node}}',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'instance_cpu_node_mem_node_op:numaprobe_memory_bandwidth_bytes_per_second:ratio_baseline{job=~"$job",instance=~"$instance",op=~"$op"} - 1',
              refId: 'B',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'figure {{op}} {{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 18,
          gridPos: {
            h: 8,
            w: 12,
            x: 12,
            y: 43,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          id: 19,
          title: 'Core-to-core latency',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 51,
          },
          panels: [],
        },
        {
          type: 'table',
          title: 'Core-to-core latency matrix (cpu_a × cpu_b)',
          description: 'One-way cache-line transfer latency between two CPUs (the slowest line home node if several were measured).',
          fieldConfig: {
            defaults: {
              unit: 's',
              decimals: 3,
              color: {
                mode: 'continuous-GrYlRd',
              },
              custom: {
                align: 'center',
                displayMode: 'color-background',
                cellOptions: {
                  type: 'color-background',
                  mode: 'gradient',
                },
                inspect: false,
              },
            },
            overrides: [
              {
                matcher: {
                  id: 'byName',
                  options: 'cpu_a\\cpu_b',
                },
                properties: [
                  {
                    id: 'custom.cellOptions',
                    value: {
                      type: 'auto',
                    },
                  },
                  {
                    id: 'custom.displayMode',
                    value: 'auto',
                  },
                  {
                    id: 'displayName',
                    value: 'cpu_a ↓ / cpu_b →',
                  },
                ],
              },
            ],
          },
          options: {
            showHeader: true,
            cellHeight: 'sm',
            footer: {
              show: false,
            },
          },
          transformations: [
            {
              id: 'groupingToMatrix',
              options: {
                columnField: 'cpu_b',
                rowField: 'cpu_a',
                valueField: 'Value',
                emptyValue: 'null',
              },
            },
          ],
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'max by (cpu_a, cpu_b) (numaprobe_core_to_core_latency_seconds{job=~"$job",instance=~"$instance"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 20,
          gridPos: {
            h: 8,
            w: 8,
            x: 0,
            y: 52,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'bargauge',
          title: 'Core-to-core latency by relation',
          description: 'Median one-way latency per CPU relation: smt (hyperthread siblings), same_llc, same_node, cross_node.',
          fieldConfig: {
            defaults: {
              unit: 's',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                ],
              },
              min: 0,
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            orientation: 'horizontal',
            displayMode: 'basic',
            showUnfilled: true,
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile by (relation) (0.5, numaprobe_core_to_core_latency_seconds{job=~"$job",instance=~"$instance"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
              legendFormat: '{{relation}}',
            },
          ],
          id: 21,
          gridPos: {
            h: 8,
            w: 5,
            x: 8,
            y: 52,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'stat',
          title: 'Cross-node core-to-core latency',
          description: 'Slowest one-way cache-line transfer between CPUs on different nodes. Needs at least two NUMA nodes: empty on single-node hosts.',
          fieldConfig: {
            defaults: {
              unit: 's',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                ],
              },
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            colorMode: 'value',
            graphMode: 'none',
            textMode: 'auto',
            justifyMode: 'auto',
            orientation: 'auto',
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'max(numaprobe_core_to_core_latency_seconds{job=~"$job",instance=~"$instance",relation="cross_node"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
            },
          ],
          id: 22,
          gridPos: {
            h: 8,
            w: 3,
            x: 13,
            y: 52,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Core-to-core latency over time',
          description: 'One-way latency per measured CPU pair.',
          fieldConfig: {
            defaults: {
              unit: 's',
              custom: {
                drawStyle: 'line',
                lineWidth: 1,
                fillOpacity: 10,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'none',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'off',
                },
              },
              color: {
                mode: 'palette-classic',
              },
            },
            overrides: [],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_core_to_core_latency_seconds{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{relation}} cpu{{cpu_a}}↔cpu{{cpu_b}} (line on node {{line_node}})',
            },
          ],
          id: 23,
          gridPos: {
            h: 8,
            w: 8,
            x: 16,
            y: 52,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          id: 24,
          title: 'Probe health',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 60,
          },
          panels: [],
        },
        {
          type: 'state-timeline',
          title: 'Probe health',
          description: 'Per probe: no run in the interval, ok (runs succeeded or were only disturbed / cancelled), or failing (any other result, including placement mismatches). The placement line turns orange when numaprobe_placement_failures_total increased.',
          fieldConfig: {
            defaults: {
              unit: 'none',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                ],
              },
              custom: {
                fillOpacity: 80,
                lineWidth: 0,
              },
              mappings: [
                {
                  type: 'value',
                  options: {
                    '0': {
                      text: 'no run',
                      color: 'transparent',
                      index: 0,
                    },
                    '1': {
                      text: 'ok',
                      color: 'green',
                      index: 1,
                    },
                    '4': {
                      text: 'placement failures',
                      color: 'orange',
                      index: 3,
                    },
                  },
                },
                {
                  type: 'range',
                  options: {
                    from: 2,
                    to: 3,
                    result: {
                      text: 'failing',
                      color: 'red',
                      index: 2,
                    },
                  },
                },
              ],
            },
            overrides: [],
          },
          options: {
            showValue: 'never',
            mergeValues: true,
            alignValue: 'left',
            rowHeight: 0.8,
            legend: {
              displayMode: 'list',
              placement: 'bottom',
              showLegend: true,
            },
            tooltip: {
              mode: 'single',
              sort: 'none',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: '((sum by (probe) (increase(numaprobe_probe_runs_total{job=~"$job",instance=~"$instance",result!~"ok|disturbed|cancelled"}[$__rate_interval])) > bool 0) or (sum by (probe) (increase(numaprobe_probe_runs_total{job=~"$job",instance=~"$instance"}[$__rate_interval])) * 0)) * 2 + (sum by (probe) (increase(numaprobe_probe_runs_total{job=~"$job",instance=~"$instance"}[$__rate_interval])) > bool 0)',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{probe}}',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: '(sum(increase(numaprobe_placement_failures_total{job=~"$job",instance=~"$instance"}[$__rate_interval])) > bool 0) * 3 + 1 or max(numaprobe_build_info{job=~"$job",instance=~"$instance"}) * 0 + 1',
              refId: 'B',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'placement',
            },
          ],
          id: 25,
          gridPos: {
            h: 6,
            w: 24,
            x: 0,
            y: 61,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Probe runs by result',
          description: 'Probe runs per interval by probe and result.',
          fieldConfig: {
            defaults: {
              unit: 'short',
              custom: {
                drawStyle: 'bars',
                lineWidth: 1,
                fillOpacity: 60,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'normal',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'off',
                },
              },
              color: {
                mode: 'palette-classic',
              },
            },
            overrides: [],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'sum by (probe, result) (increase(numaprobe_probe_runs_total{job=~"$job",instance=~"$instance"}[$__rate_interval]))',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{probe}} {{result}}',
            },
          ],
          id: 26,
          gridPos: {
            h: 8,
            w: 8,
            x: 0,
            y: 67,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Discarded samples by reason',
          description: 'Samples thrown away and retried because the probe thread was preempted (context_switch), moved (migration) or ran too long (timeout). Persistently high rates mean a busy host: measurements get stale, not wrong.',
          fieldConfig: {
            defaults: {
              unit: 'cps',
              custom: {
                drawStyle: 'line',
                lineWidth: 1,
                fillOpacity: 10,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'none',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'off',
                },
              },
              color: {
                mode: 'palette-classic',
              },
            },
            overrides: [],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'sum by (probe, reason) (rate(numaprobe_samples_discarded_total{job=~"$job",instance=~"$instance"}[$__rate_interval]))',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{probe}} {{reason}}',
            },
          ],
          id: 27,
          gridPos: {
            h: 8,
            w: 8,
            x: 8,
            y: 67,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Measurement age per pair',
          description: 'Time since the last successful probe of each pair. NumaProbeProbeStale fires when it is older than 3 refresh intervals (numaprobe_refresh_interval_seconds) for 10 min.',
          fieldConfig: {
            defaults: {
              unit: 's',
              custom: {
                align: 'auto',
                inspect: false,
                displayMode: 'color-text',
                cellOptions: {
                  type: 'color-text',
                },
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                  {
                    color: 'orange',
                    value: 600,
                  },
                  {
                    color: 'red',
                    value: 900,
                  },
                ],
              },
              color: {
                mode: 'thresholds',
              },
            },
            overrides: [],
          },
          options: {
            showHeader: true,
            cellHeight: 'sm',
            footer: {
              show: false,
            },
            sortBy: [
              {
                displayName: 'age',
                desc: true,
              },
            ],
          },
          transformations: [
            {
              id: 'organize',
              options: {
                excludeByName: {
                  Time: true,
                  __name__: true,
                  job: true,
                  instance: true,
                },
                renameByName: {
                  Value: 'age',
                },
              },
            },
          ],
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'time() - numaprobe_probe_last_success_timestamp_seconds{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 28,
          gridPos: {
            h: 8,
            w: 8,
            x: 16,
            y: 67,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          id: 29,
          title: 'Duty cycle',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 75,
          },
          panels: [],
        },
        {
          type: 'timeseries',
          title: 'Duty cycle vs budget',
          description: 'Observed share of one CPU spent in probes over the trailing 10 minutes, the configured budget (dashed), and the probe CPU per probe over the panel interval. NumaProbeDutyCycleOverBudget fires above 1.25 × the budget held for 30 min.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              custom: {
                drawStyle: 'line',
                lineWidth: 1,
                fillOpacity: 10,
                showPoints: 'never',
                spanNulls: false,
                lineInterpolation: 'stepAfter',
                stacking: {
                  mode: 'none',
                  group: 'A',
                },
                thresholdsStyle: {
                  mode: 'off',
                },
              },
              color: {
                mode: 'palette-classic',
              },
              min: 0,
            },
            overrides: [
              {
                matcher: {
                  id: 'byRegexp',
                  options: '^budget$',
                },
                properties: [
                  {
                    id: 'custom.lineStyle',
                    value: {
                      fill: 'dash',
                      dash: [
                        10,
                        10,
                      ],
                    },
                  },
                  {
                    id: 'custom.fillOpacity',
                    value: 0,
                  },
                ],
              },
            ],
          },
          options: {
            legend: {
              displayMode: 'table',
              placement: 'bottom',
              showLegend: true,
              calcs: [
                'lastNotNull',
                'max',
              ],
            },
            tooltip: {
              mode: 'multi',
              sort: 'desc',
            },
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_duty_cycle_ratio{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'observed (10 min window)',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_duty_cycle_budget_ratio{job=~"$job",instance=~"$instance"}',
              refId: 'B',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: 'budget',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'sum by (probe) (rate(numaprobe_probe_cpu_seconds_total{job=~"$job",instance=~"$instance"}[$__rate_interval]))',
              refId: 'C',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{probe}} probe CPU',
            },
          ],
          id: 30,
          gridPos: {
            h: 8,
            w: 24,
            x: 0,
            y: 76,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          title: 'Baseline',
          collapsed: false,
          panels: [],
          id: 31,
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 84,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Baseline origin and fingerprint',
          description: "The stored baseline's fingerprint and why it exists: first_start, restored, accepted, reset, settings_changed, topology_changed (NumaProbeTopologyChanged fires until `numaprobe baseline accept`), state_file_corrupt. Kernel, microcode, firmware or numaprobe upgrades keep the baseline; they appear as annotations.",
          fieldConfig: {
            defaults: {
              unit: 'none',
              custom: {
                align: 'auto',
                inspect: false,
                displayMode: 'color-text',
                cellOptions: {
                  type: 'color-text',
                },
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                  {
                    color: 'orange',
                    value: 600,
                  },
                  {
                    color: 'red',
                    value: 900,
                  },
                ],
              },
              color: {
                mode: 'thresholds',
              },
            },
            overrides: [],
          },
          options: {
            showHeader: true,
            cellHeight: 'sm',
            footer: {
              show: false,
            },
            sortBy: [],
          },
          transformations: [
            {
              id: 'organize',
              options: {
                excludeByName: {
                  Time: true,
                  __name__: true,
                  job: true,
                  instance: true,
                  Value: true,
                },
              },
            },
          ],
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_baseline_info{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 32,
          gridPos: {
            h: 6,
            w: 10,
            x: 0,
            y: 85,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'stat',
          title: 'Refresh interval',
          description: 'Expected time between two figures of one series at the current schedule (numaprobe_refresh_interval_seconds): the configured round interval, or the measured round duration if longer, times the rotation factor. Staleness and the drift hold are judged against it.',
          fieldConfig: {
            defaults: {
              unit: 's',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                  {
                    color: 'orange',
                    value: 601,
                  },
                ],
              },
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            colorMode: 'value',
            graphMode: 'none',
            textMode: 'auto',
            justifyMode: 'auto',
            orientation: 'auto',
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_refresh_interval_seconds{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
            },
          ],
          id: 33,
          gridPos: {
            h: 6,
            w: 4,
            x: 10,
            y: 85,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'bargauge',
          title: 'Baseline spread (max − min) / median',
          description: "Spread of the per-round figures each pair's baseline was recorded from (at least 5 rounds). A spread near the alert threshold means the baseline itself is uncertain: re-record it on a quieter host state (`numaprobe baseline reset`).",
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                  {
                    color: 'orange',
                    value: 0.05,
                  },
                ],
              },
              min: 0,
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            orientation: 'horizontal',
            displayMode: 'basic',
            showUnfilled: true,
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile without(cpu) (0.5, numaprobe_memory_latency_baseline_spread_ratio{job=~"$job",instance=~"$instance"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
              legendFormat: 'latency {{cpu_node}}→{{mem_node}}',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_memory_bandwidth_baseline_spread_ratio{job=~"$job",instance=~"$instance"}',
              refId: 'B',
              instant: true,
              range: false,
              format: 'time_series',
              legendFormat: '{{op}} {{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 34,
          gridPos: {
            h: 6,
            w: 10,
            x: 14,
            y: 85,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          title: 'Host facts and firmware-advertised figures (ACPI HMAT)',
          collapsed: false,
          panels: [],
          id: 35,
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 91,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'bargauge',
          title: 'Measured / advertised latency ratio (ACPI HMAT)',
          description: 'Measured idle latency of each pair over the read latency the firmware advertises (ACPI HMAT) for its CPU node, numaprobe_memory_latency_hmat_ratio. Above 100%: slower than advertised. Compare with peers of the same CPU model and firmware, not with 100%. Empty on hosts without an HMAT.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                ],
              },
              min: 0,
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            orientation: 'horizontal',
            displayMode: 'basic',
            showUnfilled: true,
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_memory_latency_hmat_ratio{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
              legendFormat: '{{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 36,
          gridPos: {
            h: 8,
            w: 8,
            x: 0,
            y: 92,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'bargauge',
          title: 'Measured / advertised bandwidth ratio (ACPI HMAT)',
          description: 'Measured read and write bandwidth of each pair over the bandwidth the firmware advertises (ACPI HMAT) for its CPU node, numaprobe_memory_bandwidth_hmat_ratio. Below 100%: less than advertised (a slower memory speed, a missing channel, a CXL link at lower width). Empty on hosts without an HMAT.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              color: {
                mode: 'thresholds',
              },
              thresholds: {
                mode: 'absolute',
                steps: [
                  {
                    color: 'green',
                    value: null,
                  },
                ],
              },
              min: 0,
            },
            overrides: [],
          },
          options: {
            reduceOptions: {
              calcs: [
                'lastNotNull',
              ],
              fields: '',
              values: false,
            },
            orientation: 'horizontal',
            displayMode: 'basic',
            showUnfilled: true,
          },
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_memory_bandwidth_hmat_ratio{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
              legendFormat: '{{op}} {{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 37,
          gridPos: {
            h: 8,
            w: 8,
            x: 8,
            y: 92,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Host facts',
          description: 'The host settings numaprobe reads every probe round and on reload (numaprobe_host_fact_info): transparent huge pages, NUMA balancing, cpufreq governor and energy-performance preference per node, watched boot parameters, memory tiering, EDAC. Their changes are the orange "Host changes" annotations; docs/runbook.md says what each does.',
          fieldConfig: {
            defaults: {
              unit: 'none',
            },
            overrides: [],
          },
          options: {
            showHeader: true,
          },
          transformations: [
            {
              id: 'organize',
              options: {
                excludeByName: {
                  Time: true,
                  Value: true,
                  __name__: true,
                  instance: true,
                  job: true,
                },
                indexByName: {
                  field: 0,
                  value: 1,
                },
                renameByName: {},
              },
            },
          ],
          targets: [
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'numaprobe_host_fact_info{job=~"$job",instance=~"$instance"}',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 38,
          gridPos: {
            h: 8,
            w: 8,
            x: 16,
            y: 92,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
      ],
      refresh: '1m',
      schemaVersion: 38,
      style: 'dark',
      templating: {
        list: [
          {
            type: 'datasource',
            name: 'datasource',
            label: 'Data source',
            query: 'prometheus',
            current: {},
            hide: 0,
            includeAll: false,
            multi: false,
            options: [],
            refresh: 1,
            regex: '',
            skipUrlSync: false,
          },
          {
            type: 'query',
            name: 'job',
            label: 'Job',
            datasource: {
              type: 'prometheus',
              uid: '${datasource}',
            },
            definition: 'label_values(numaprobe_build_info, job)',
            query: {
              query: 'label_values(numaprobe_build_info, job)',
              refId: 'StandardVariableQuery',
            },
            current: {},
            hide: 0,
            includeAll: true,
            multi: true,
            options: [],
            refresh: 2,
            regex: '',
            sort: 1,
            skipUrlSync: false,
            allValue: '.+',
          },
          {
            type: 'query',
            name: 'instance',
            label: 'Instance',
            datasource: {
              type: 'prometheus',
              uid: '${datasource}',
            },
            definition: 'label_values(numaprobe_build_info{job=~"$job"}, instance)',
            query: {
              query: 'label_values(numaprobe_build_info{job=~"$job"}, instance)',
              refId: 'StandardVariableQuery',
            },
            current: {},
            hide: 0,
            includeAll: false,
            multi: false,
            options: [],
            refresh: 2,
            regex: '',
            sort: 1,
            skipUrlSync: false,
          },
          {
            type: 'query',
            name: 'op',
            label: 'Bandwidth op',
            datasource: {
              type: 'prometheus',
              uid: '${datasource}',
            },
            definition: 'label_values(numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance"}, op)',
            query: {
              query: 'label_values(numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance"}, op)',
              refId: 'StandardVariableQuery',
            },
            current: {},
            hide: 0,
            includeAll: true,
            multi: true,
            options: [],
            refresh: 2,
            regex: '',
            sort: 1,
            skipUrlSync: false,
            allValue: '.+',
          },
        ],
      },
      time: {
        from: 'now-24h',
        to: 'now',
      },
      timepicker: {},
      timezone: '',
      version: 1,
      weekStart: '',
    },
  },
}
