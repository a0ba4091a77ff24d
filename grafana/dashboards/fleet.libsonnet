{
  grafanaDashboards+:: {
    'numaprobe-fleet.json': {
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
        ],
      },
      description: 'NUMA memory latency and bandwidth across a fleet: distributions per CPU model, drift, failing probes and hosts out of line with their peers.',
      editable: false,
      fiscalYearStartMonth: 0,
      graphTooltip: 1,
      id: null,
      uid: 'numaprobe-fleet',
      title: 'numaprobe / Fleet',
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
          type: 'stat',
          title: 'Hosts reporting',
          description: 'Targets exporting numaprobe_build_info.',
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
              expr: 'count(numaprobe_build_info{job=~"$job",instance=~"$instance"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
            },
          ],
          id: 2,
          gridPos: {
            h: 4,
            w: 6,
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
          title: 'Targets down',
          description: 'numaprobe targets Prometheus cannot scrape (up == 0).',
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
                  {
                    color: 'red',
                    value: 1,
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
              expr: 'count(up{job=~"$job",instance=~"$instance"} == 0) or vector(0)',
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
            x: 6,
            y: 1,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'stat',
          title: 'Stale measurements',
          description: 'Pairs whose last successful probe is older than 3 refresh intervals of their host (numaprobe_refresh_interval_seconds: 5 min at the default schedule, longer for big plans).',
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
                  {
                    color: 'red',
                    value: 1,
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
              expr: 'count(time() - numaprobe_probe_last_success_timestamp_seconds{job=~"$job",instance=~"$instance"} > on(instance, job) group_left() 3 * instance:numaprobe_refresh_interval_seconds:last{job=~"$job",instance=~"$instance"}) or vector(0)',
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
            x: 12,
            y: 1,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'stat',
          title: 'numaprobe versions',
          description: 'Hosts per numaprobe version.',
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
            textMode: 'value_and_name',
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
              expr: 'count by (version) (numaprobe_build_info{job=~"$job",instance=~"$instance"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'time_series',
              legendFormat: '{{version}}',
            },
          ],
          id: 5,
          gridPos: {
            h: 4,
            w: 6,
            x: 18,
            y: 1,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          id: 6,
          title: 'Remote/local latency ratio by CPU model',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 5,
          },
          panels: [],
        },
        {
          type: 'timeseries',
          title: 'Remote/local latency ratio across hosts by CPU model',
          description: "Distribution over hosts of each host's worst remote/local latency ratio, per CPU model: median (solid) and 10th / 90th percentiles (dashed). A wide band means hosts of one model are configured differently (SNC/NPS, DIMM population).",
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
                  options: '.* p[19]0$',
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
              expr: 'quantile by (cpu_model) (0.5, instance:numaprobe_memory_latency_seconds:max_ratio_local{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"})',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{cpu_model}} p50',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile by (cpu_model) (0.1, instance:numaprobe_memory_latency_seconds:max_ratio_local{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"})',
              refId: 'B',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{cpu_model}} p10',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile by (cpu_model) (0.9, instance:numaprobe_memory_latency_seconds:max_ratio_local{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"})',
              refId: 'C',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{cpu_model}} p90',
            },
          ],
          id: 7,
          gridPos: {
            h: 8,
            w: 14,
            x: 0,
            y: 6,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Remote/local latency ratio by CPU model',
          description: 'Worst remote/local latency ratio per host, summarised per CPU model.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              custom: {
                align: 'auto',
                inspect: false,
                displayMode: 'auto',
                cellOptions: {
                  type: 'auto',
                },
              },
            },
            overrides: [
              {
                matcher: {
                  id: 'byName',
                  options: 'Value #D',
                },
                properties: [
                  {
                    id: 'unit',
                    value: 'none',
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
              id: 'merge',
              options: {},
            },
            {
              id: 'organize',
              options: {
                excludeByName: {
                  Time: true,
                  __name__: true,
                },
                renameByName: {
                  'Value #A': 'min',
                  'Value #B': 'median',
                  'Value #C': 'max',
                  'Value #D': 'hosts',
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
              expr: 'min by (cpu_model) (instance:numaprobe_memory_latency_seconds:max_ratio_local{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile by (cpu_model) (0.5, instance:numaprobe_memory_latency_seconds:max_ratio_local{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"})',
              refId: 'B',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'max by (cpu_model) (instance:numaprobe_memory_latency_seconds:max_ratio_local{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"})',
              refId: 'C',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'count by (cpu_model) (instance:numaprobe_memory_latency_seconds:max_ratio_local{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"})',
              refId: 'D',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 8,
          gridPos: {
            h: 8,
            w: 10,
            x: 14,
            y: 6,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Remote pairs: remote/local ratio by CPU model',
          description: 'Remote/local latency ratio per node pair across hosts of one CPU model: median and spread. Needs at least two NUMA nodes: empty on single-node hosts.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
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
              id: 'merge',
              options: {},
            },
            {
              id: 'organize',
              options: {
                excludeByName: {
                  Time: true,
                  __name__: true,
                },
                renameByName: {
                  'Value #A': 'median',
                  'Value #B': 'p10',
                  'Value #C': 'p90',
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
              expr: 'quantile by (cpu_model, cpu_node, mem_node) (0.5, instance_cpu_node_mem_node:numaprobe_memory_latency_seconds:ratio_local{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"} and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} > 10)',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile by (cpu_model, cpu_node, mem_node) (0.1, instance_cpu_node_mem_node:numaprobe_memory_latency_seconds:ratio_local{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"} and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} > 10)',
              refId: 'B',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile by (cpu_model, cpu_node, mem_node) (0.9, instance_cpu_node_mem_node:numaprobe_memory_latency_seconds:ratio_local{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"} and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} > 10)',
              refId: 'C',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 9,
          gridPos: {
            h: 7,
            w: 24,
            x: 0,
            y: 14,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          id: 10,
          title: 'Memory bandwidth by CPU model',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 21,
          },
          panels: [],
        },
        {
          type: 'timeseries',
          title: 'Local bandwidth across hosts by CPU model',
          description: 'Median over hosts of the local-node bandwidth per CPU model and operation.',
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
              expr: 'quantile by (cpu_model, op) (0.5, max without(threads) (numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance"}) * on(instance, job) group_left(cpu_model) group by (instance, job, cpu_model) (numaprobe_host_info{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"}) and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} == 10)',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{cpu_model}} {{op}}',
            },
          ],
          id: 11,
          gridPos: {
            h: 8,
            w: 12,
            x: 0,
            y: 22,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Local bandwidth distribution by CPU model',
          description: 'Local-node bandwidth across hosts per CPU model and operation: 10th percentile, median, 90th percentile.',
          fieldConfig: {
            defaults: {
              unit: 'Bps',
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
              id: 'merge',
              options: {},
            },
            {
              id: 'organize',
              options: {
                excludeByName: {
                  Time: true,
                  __name__: true,
                },
                renameByName: {
                  'Value #A': 'p10',
                  'Value #B': 'median',
                  'Value #C': 'p90',
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
              expr: 'quantile by (cpu_model, op) (0.1, max without(threads) (numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance"}) * on(instance, job) group_left(cpu_model) group by (instance, job, cpu_model) (numaprobe_host_info{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"}) and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} == 10)',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile by (cpu_model, op) (0.5, max without(threads) (numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance"}) * on(instance, job) group_left(cpu_model) group by (instance, job, cpu_model) (numaprobe_host_info{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"}) and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} == 10)',
              refId: 'B',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile by (cpu_model, op) (0.9, max without(threads) (numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance"}) * on(instance, job) group_left(cpu_model) group by (instance, job, cpu_model) (numaprobe_host_info{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"}) and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} == 10)',
              refId: 'C',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 12,
          gridPos: {
            h: 8,
            w: 12,
            x: 12,
            y: 22,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Remote bandwidth distribution by CPU model',
          description: 'Remote-node bandwidth across hosts per CPU model, pair and operation. Needs at least two NUMA nodes: empty on single-node hosts.',
          fieldConfig: {
            defaults: {
              unit: 'Bps',
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
              id: 'merge',
              options: {},
            },
            {
              id: 'organize',
              options: {
                excludeByName: {
                  Time: true,
                  __name__: true,
                },
                renameByName: {
                  'Value #A': 'p10',
                  'Value #B': 'median',
                  'Value #C': 'p90',
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
              expr: 'quantile by (cpu_model, cpu_node, mem_node, op) (0.1, max without(threads) (numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance"}) * on(instance, job) group_left(cpu_model) group by (instance, job, cpu_model) (numaprobe_host_info{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"}) and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} > 10)',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile by (cpu_model, cpu_node, mem_node, op) (0.5, max without(threads) (numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance"}) * on(instance, job) group_left(cpu_model) group by (instance, job, cpu_model) (numaprobe_host_info{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"}) and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} > 10)',
              refId: 'B',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'quantile by (cpu_model, cpu_node, mem_node, op) (0.9, max without(threads) (numaprobe_memory_bandwidth_bytes_per_second{job=~"$job",instance=~"$instance"}) * on(instance, job) group_left(cpu_model) group by (instance, job, cpu_model) (numaprobe_host_info{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"}) and on(instance, job, cpu_node, mem_node) numaprobe_numa_distance{job=~"$job",instance=~"$instance"} > 10)',
              refId: 'C',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 13,
          gridPos: {
            h: 7,
            w: 24,
            x: 0,
            y: 30,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          id: 14,
          title: 'Drift',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 37,
          },
          panels: [],
        },
        {
          type: 'table',
          title: 'Top drifting hosts: latency',
          description: "Hosts with the largest rise of a pair's recent median latency (median of the last 3 figures) over its baseline. NumaProbeLatencyDrift fires when the recent median (median of the last 3 figures) stays more than 5% over the baseline (20 min at refresh intervals up to 10 min, then 5 min).",
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
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
                    value: 0.025,
                  },
                  {
                    color: 'red',
                    value: 0.05,
                  },
                ],
              },
              color: {
                mode: 'thresholds',
              },
              links: [
                {
                  title: 'numaprobe / Host: ${__data.fields.instance}',
                  url: '/d/numaprobe-host/numaprobe-host?${datasource:queryparam}&var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                },
              ],
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
                displayName: 'drift',
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
                },
                renameByName: {
                  Value: 'drift',
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
              expr: 'topk(10, max by (job, instance) (instance_cpu_node_mem_node:numaprobe_memory_latency_recent_median_seconds:ratio_baseline{job=~"$job",instance=~"$instance"} - 1))',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 15,
          gridPos: {
            h: 8,
            w: 12,
            x: 0,
            y: 38,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Top drifting hosts: bandwidth drop',
          description: "Hosts with the largest drop of a pair's recent median bandwidth under its baseline (worst pair and operation). NumaProbeBandwidthDrop fires when the recent median stays more than 12% under the baseline (20 min at refresh intervals up to 10 min, then 5 min).",
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
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
                    value: 0.06,
                  },
                  {
                    color: 'red',
                    value: 0.12,
                  },
                ],
              },
              color: {
                mode: 'thresholds',
              },
              links: [
                {
                  title: 'numaprobe / Host: ${__data.fields.instance}',
                  url: '/d/numaprobe-host/numaprobe-host?${datasource:queryparam}&var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                },
              ],
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
                displayName: 'drop',
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
                },
                renameByName: {
                  Value: 'drop',
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
              expr: 'topk(10, max by (job, instance) (1 - instance_cpu_node_mem_node_op:numaprobe_memory_bandwidth_recent_median_bytes_per_second:ratio_baseline{job=~"$job",instance=~"$instance"}))',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 16,
          gridPos: {
            h: 8,
            w: 12,
            x: 12,
            y: 38,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Drifted hosts and the host changes since their baseline',
          description: "Per host: the worst pair's recent median latency over its baseline, the worst bandwidth drop under it, and every change of the host fingerprint seen since the baseline was recorded (field, before, after, when). A fleet-wide rollout shows as many hosts drifting after the same change. \"none\": no change since the baseline.",
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
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
                    value: 0.025,
                  },
                  {
                    color: 'red',
                    value: 0.05,
                  },
                ],
              },
              color: {
                mode: 'thresholds',
              },
              links: [
                {
                  title: 'numaprobe / Host: ${__data.fields.instance}',
                  url: '/d/numaprobe-host/numaprobe-host?${datasource:queryparam}&var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                },
              ],
            },
            overrides: [
              {
                matcher: {
                  id: 'byName',
                  options: 'bandwidth drop',
                },
                properties: [
                  {
                    id: 'thresholds',
                    value: {
                      mode: 'absolute',
                      steps: [
                        {
                          color: 'green',
                          value: null,
                        },
                        {
                          color: 'orange',
                          value: 0.06,
                        },
                        {
                          color: 'red',
                          value: 0.12,
                        },
                      ],
                    },
                  },
                ],
              },
              {
                matcher: {
                  id: 'byName',
                  options: 'change seen',
                },
                properties: [
                  {
                    id: 'unit',
                    value: 'dateTimeAsIso',
                  },
                  {
                    id: 'mappings',
                    value: [
                      {
                        type: 'value',
                        options: {
                          '0': {
                            text: 'none',
                            index: 0,
                          },
                        },
                      },
                    ],
                  },
                  {
                    id: 'custom.cellOptions',
                    value: {
                      type: 'auto',
                    },
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
            sortBy: [
              {
                displayName: 'latency drift',
                desc: true,
              },
            ],
          },
          transformations: [
            {
              id: 'merge',
              options: {},
            },
            {
              id: 'organize',
              options: {
                excludeByName: {
                  Time: true,
                  __name__: true,
                },
                indexByName: {
                  job: 0,
                  instance: 1,
                  'Value #A': 2,
                  'Value #B': 3,
                  field: 4,
                  before: 5,
                  after: 6,
                  'Value #C': 7,
                },
                renameByName: {
                  'Value #A': 'latency drift',
                  'Value #B': 'bandwidth drop',
                  field: 'changed',
                  'Value #C': 'change seen',
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
              expr: 'max by (job, instance) (instance_cpu_node_mem_node:numaprobe_memory_latency_recent_median_seconds:ratio_baseline{job=~"$job",instance=~"$instance"} - 1)',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'max by (job, instance) (1 - instance_cpu_node_mem_node_op:numaprobe_memory_bandwidth_recent_median_bytes_per_second:ratio_baseline{job=~"$job",instance=~"$instance"})',
              refId: 'B',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'max by (job, instance, field, before, after) (numaprobe_host_change_timestamp_seconds{job=~"$job",instance=~"$instance"}) * 1000 or on(job, instance) max by (job, instance) (numaprobe_baseline_info{job=~"$job",instance=~"$instance"}) * 0',
              refId: 'C',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 17,
          gridPos: {
            h: 8,
            w: 24,
            x: 0,
            y: 46,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Latency drift of the 10 most drifting hosts',
          description: 'Worst-pair recent median latency over baseline, over time, for the hosts drifting most at each point in time.',
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
                    value: 0.1,
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
              expr: 'topk(10, max by (instance) (instance_cpu_node_mem_node:numaprobe_memory_latency_recent_median_seconds:ratio_baseline{job=~"$job",instance=~"$instance"} - 1))',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{instance}}',
            },
          ],
          id: 18,
          gridPos: {
            h: 8,
            w: 24,
            x: 0,
            y: 54,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          id: 19,
          title: 'Failing or stale probes',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 62,
          },
          panels: [],
        },
        {
          type: 'table',
          title: 'Probe failure ratio by host (last hour)',
          description: 'Share of failed runs per host and probe over the last hour, worst first; placement results are counted separately. NumaProbeProbesFailing fires above 25% held for 30 min.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
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
                    value: 0.1,
                  },
                  {
                    color: 'red',
                    value: 0.25,
                  },
                ],
              },
              color: {
                mode: 'thresholds',
              },
              links: [
                {
                  title: 'numaprobe / Host: ${__data.fields.instance}',
                  url: '/d/numaprobe-host/numaprobe-host?${datasource:queryparam}&var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                },
              ],
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
                },
                renameByName: {
                  Value: 'failed',
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
              expr: 'sort_desc((sum by (job, instance, probe) (increase(numaprobe_probe_runs_total{job=~"$job",instance=~"$instance",result!~"ok|disturbed|cancelled|bind_failed|placement_mismatch|placement_unverified"}[1h])) or sum by (job, instance, probe) (increase(numaprobe_probe_runs_total{job=~"$job",instance=~"$instance"}[1h])) * 0) / sum by (job, instance, probe) (increase(numaprobe_probe_runs_total{job=~"$job",instance=~"$instance"}[1h])))',
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
            y: 63,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Oldest measurement by host',
          description: 'Time since the last successful probe of the least recently refreshed pair, per host and probe, oldest first. NumaProbeProbeStale fires when it is older than 3 refresh intervals (numaprobe_refresh_interval_seconds) for 10 min.',
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
              links: [
                {
                  title: 'numaprobe / Host: ${__data.fields.instance}',
                  url: '/d/numaprobe-host/numaprobe-host?${datasource:queryparam}&var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                },
              ],
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
              expr: 'sort_desc(max by (job, instance, probe) (time() - numaprobe_probe_last_success_timestamp_seconds{job=~"$job",instance=~"$instance"}))',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 21,
          gridPos: {
            h: 8,
            w: 8,
            x: 8,
            y: 63,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Placement failures by host (last hour)',
          description: 'Probe memory that could not be placed on, or verified on, its memory node in the last hour. NumaProbePlacementFailures fires when failures keep occurring for 1 h.',
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
                    color: 'red',
                    value: 1,
                  },
                ],
              },
              color: {
                mode: 'thresholds',
              },
              links: [
                {
                  title: 'numaprobe / Host: ${__data.fields.instance}',
                  url: '/d/numaprobe-host/numaprobe-host?${datasource:queryparam}&var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                },
              ],
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
                },
                renameByName: {
                  Value: 'failures',
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
              expr: 'sort_desc(sum by (job, instance) (increase(numaprobe_placement_failures_total{job=~"$job",instance=~"$instance"}[1h])) or sum by (job, instance) (numaprobe_build_info{job=~"$job",instance=~"$instance"}) * 0)',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 22,
          gridPos: {
            h: 8,
            w: 8,
            x: 16,
            y: 63,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Scrape status (down first)',
          description: 'up per numaprobe target; 0 = Prometheus cannot scrape it.',
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
                    color: 'red',
                    value: null,
                  },
                  {
                    color: 'green',
                    value: 1,
                  },
                ],
              },
              color: {
                mode: 'thresholds',
              },
              links: [
                {
                  title: 'numaprobe / Host: ${__data.fields.instance}',
                  url: '/d/numaprobe-host/numaprobe-host?${datasource:queryparam}&var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                },
              ],
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
                },
                renameByName: {
                  Value: 'up',
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
              expr: 'sort(up{job=~"$job",instance=~"$instance"})',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 23,
          gridPos: {
            h: 6,
            w: 24,
            x: 0,
            y: 71,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'row',
          id: 24,
          title: 'Deviation from same-CPU peers',
          collapsed: false,
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          gridPos: {
            h: 1,
            w: 24,
            x: 0,
            y: 77,
          },
          panels: [],
        },
        {
          type: 'table',
          title: 'Hosts deviating from peers: remote/local latency ratio',
          description: '|host ratio / median ratio of the hosts with the same job and CPU model − 1| per pair, from the recent medians, largest first. NumaProbeRemoteLocalRatioOutlier fires above 8% held for 1 h when the cohort has the host and at least 4 peers.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
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
                    value: 0.05,
                  },
                  {
                    color: 'red',
                    value: 0.1,
                  },
                ],
              },
              color: {
                mode: 'thresholds',
              },
              links: [
                {
                  title: 'numaprobe / Host: ${__data.fields.instance}',
                  url: '/d/numaprobe-host/numaprobe-host?${datasource:queryparam}&var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                },
              ],
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
                displayName: 'deviation',
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
                },
                renameByName: {
                  Value: 'deviation',
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
              expr: 'topk(20, abs(instance_cpu_node_mem_node:numaprobe_memory_latency_recent_median_seconds:ratio_local_vs_peers{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"} - 1))',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 25,
          gridPos: {
            h: 8,
            w: 12,
            x: 0,
            y: 78,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Hosts deviating from peers: bandwidth',
          description: '|host bandwidth / median bandwidth of the hosts with the same job and CPU model − 1| per pair and operation, from the recent medians, largest first.',
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
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
                    value: 0.05,
                  },
                  {
                    color: 'red',
                    value: 0.1,
                  },
                ],
              },
              color: {
                mode: 'thresholds',
              },
              links: [
                {
                  title: 'numaprobe / Host: ${__data.fields.instance}',
                  url: '/d/numaprobe-host/numaprobe-host?${datasource:queryparam}&var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                },
              ],
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
                displayName: 'deviation',
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
                },
                renameByName: {
                  Value: 'deviation',
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
              expr: 'topk(20, abs(instance_cpu_node_mem_node_op:numaprobe_memory_bandwidth_recent_median_bytes_per_second:ratio_peers{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"} - 1))',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 26,
          gridPos: {
            h: 8,
            w: 12,
            x: 12,
            y: 78,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'timeseries',
          title: 'Deviation from peers over time (signed)',
          description: 'Host remote/local ratio (recent medians) / cohort median − 1 for the 10 largest deviations; negative values (remote memory looking local) deserve as much attention as positive ones.',
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
              expr: '(instance_cpu_node_mem_node:numaprobe_memory_latency_recent_median_seconds:ratio_local_vs_peers{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"} - 1) and on(instance, job, cpu_node, mem_node) topk(10, abs(instance_cpu_node_mem_node:numaprobe_memory_latency_recent_median_seconds:ratio_local_vs_peers{job=~"$job",instance=~"$instance",cpu_model=~"$cpu_model"} - 1))',
              refId: 'A',
              instant: false,
              range: true,
              format: 'time_series',
              legendFormat: '{{instance}} {{cpu_node}}→{{mem_node}}',
            },
          ],
          id: 27,
          gridPos: {
            h: 8,
            w: 12,
            x: 0,
            y: 86,
          },
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
        },
        {
          type: 'table',
          title: 'Peer cohorts',
          description: "Hosts per (job, CPU model, pair) cohort and the cohort's median remote/local ratio (recent medians). Cohorts of fewer than 5 hosts are not alerted on.",
          fieldConfig: {
            defaults: {
              unit: 'percentunit',
              custom: {
                align: 'auto',
                inspect: false,
                displayMode: 'auto',
                cellOptions: {
                  type: 'auto',
                },
              },
            },
            overrides: [
              {
                matcher: {
                  id: 'byName',
                  options: 'Value #B',
                },
                properties: [
                  {
                    id: 'unit',
                    value: 'none',
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
              id: 'merge',
              options: {},
            },
            {
              id: 'organize',
              options: {
                excludeByName: {
                  Time: true,
                  __name__: true,
                },
                renameByName: {
                  'Value #A': 'median ratio',
                  'Value #B': 'hosts',
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
              expr: 'cpu_model_cpu_node_mem_node:numaprobe_memory_latency_recent_median_seconds:ratio_local_peer_median{job=~"$job",cpu_model=~"$cpu_model"}',
              refId: 'A',
              instant: true,
              range: false,
              format: 'table',
            },
            {
              datasource: {
                type: 'prometheus',
                uid: '${datasource}',
              },
              editorMode: 'code',
              expr: 'cpu_model_cpu_node_mem_node:numaprobe_memory_latency_recent_median_seconds:ratio_local_peer_count{job=~"$job",cpu_model=~"$cpu_model"}',
              refId: 'B',
              instant: true,
              range: false,
              format: 'table',
            },
          ],
          id: 28,
          gridPos: {
            h: 8,
            w: 12,
            x: 12,
            y: 86,
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
            name: 'cpu_model',
            label: 'CPU model',
            datasource: {
              type: 'prometheus',
              uid: '${datasource}',
            },
            definition: 'label_values(numaprobe_host_info{job=~"$job",instance=~"$instance"}, cpu_model)',
            query: {
              query: 'label_values(numaprobe_host_info{job=~"$job",instance=~"$instance"}, cpu_model)',
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
