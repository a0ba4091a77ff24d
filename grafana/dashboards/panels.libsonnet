// SPDX-License-Identifier: Apache-2.0
// Small constructors for the Grafana panels the numaprobe dashboards use
// (schemaVersion 38: Grafana 9.x and 10.x). Every panel and query uses the
// `datasource` template variable. Ids and grid positions are assigned by
// `layout` from the order of the panels, so panels are listed, not placed.
{
  local datasource = { type: 'prometheus', uid: '${datasource}' },

  // A query: range (time series) by default, instant table for tables.
  query(expr, legend='', instant=false, refId='A'):: {
    datasource: datasource,
    editorMode: 'code',
    expr: expr,
    refId: refId,
    instant: instant,
    range: !instant,
    format: if instant then 'table' else 'time_series',
    [if legend != '' then 'legendFormat']: legend,
  },
  // A stat's query: instant, since a stat without a graph shows only the
  // last value, and a range query would evaluate its expression at every
  // step of the time range for nothing; time-series format, so the legend
  // names the value.
  statQuery(expr, legend=''):: self.query(expr, legend, instant=true) { format: 'time_series' },
  // Several queries with refIds A, B, C...
  queries(list):: std.mapWithIndex(function(i, q) q { refId: std.char(65 + i) }, list),

  // Threshold steps: base colour, then [value, colour] pairs, ascending.
  steps(base, pairs=[]):: {
    mode: 'absolute',
    steps: [{ color: base, value: null }] + [{ color: p[1], value: p[0] } for p in pairs],
  },

  local base(type, title, description, targets, unit, w, h) = {
    type: type,
    title: title,
    description: description,
    datasource: datasource,
    targets: targets,
    fieldConfig: { defaults: { unit: unit }, overrides: [] },
    gridPos: { w: w, h: h },
  },

  // One copy of the panel per bandwidth op selected, side by side: each
  // copy's query reads one op's series.
  perOp:: { repeat: 'op', repeatDirection: 'h', maxPerRow: 3 },

  // A link from a panel to the runbook section of the alert whose quantity
  // it shows (panel links use the dashboard link shape in the schema).
  runbook(urlPattern, alert):: {
    links: [{
      type: 'link',
      title: 'Runbook: ' + alert,
      tooltip: 'What to check when %s fires' % alert,
      url: urlPattern % std.asciiLower(alert),
      tags: [],
      icon: 'doc',
      asDropdown: false,
      includeVars: false,
      keepTime: false,
      targetBlank: true,
    }],
  },

  row(title):: { type: 'row', title: title, datasource: datasource, collapsed: false, panels: [], gridPos: { w: 24, h: 1 } },

  stat(title, description, targets, unit, thresholds, w=6, h=4, mappings=[])::
    base('stat', title, description, targets, unit, w, h) {
      fieldConfig+: { defaults+: { color: { mode: 'thresholds' }, thresholds: thresholds, mappings: mappings } },
      options: {
        colorMode: 'background',
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
      },
    },

  // One colour per series name, so a pair has the same colour on every
  // panel; a list legend on the right stays readable at 16 nodes (256
  // pairs), and the tooltip sorts the worst first.
  timeseries(title, description, targets, unit, w=12, h=8, thresholds=null, min=null)::
    base('timeseries', title, description, targets, unit, w, h) {
      fieldConfig+: {
        defaults+: {
          color: { mode: 'palette-classic-by-name' },
          custom: {
            drawStyle: 'line',
            lineInterpolation: 'stepAfter',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            spanNulls: false,
            thresholdsStyle: { mode: if thresholds == null then 'off' else 'dashed' },
          },
          [if thresholds != null then 'thresholds']: thresholds,
          [if min != null then 'min']: min,
        },
      },
      options: {
        legend: { displayMode: 'list', placement: 'right', showLegend: true, calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },

  // A table of instant queries; `hide` names columns not shown.
  table(title, description, targets, unit, w=12, h=8, thresholds=null, hide=[], transformations=[])::
    base('table', title, description, targets, unit, w, h) {
      fieldConfig+: {
        defaults+: {
          custom: { align: 'auto', cellOptions: { type: if thresholds == null then 'auto' else 'color-background' } },
          [if thresholds != null then 'color']: { mode: 'thresholds' },
          [if thresholds != null then 'thresholds']: thresholds,
        },
      },
      options: { cellHeight: 'sm', footer: { show: false }, showHeader: true },
      transformations: (if hide == [] then [] else [
                          { id: 'organize', options: { excludeByName: { [n]: true for n in hide } } },
                        ]) + transformations,
    },

  // A row x column matrix of one instant query (cpu_node x mem_node). With
  // thresholds the cells are coloured at those levels; without, the values
  // are shown plain (absolute figures coloured by size would only show the
  // topology: remote is always slower).
  matrix(title, description, expr, unit, thresholds=null, rowField='cpu_node', columnField='mem_node', w=12, h=8)::
    self.table(title,
               description,
               [self.query(expr, instant=true)],
               unit,
               w,
               h,
               thresholds,
               transformations=[{
                 id: 'groupingToMatrix',
                 options: { rowField: rowField, columnField: columnField, valueField: 'Value', emptyValue: 'null' },
               }]) {
      fieldConfig+: {
        defaults+: { custom+: { align: 'center' }, decimals: 3 },
        overrides: [{
          matcher: { id: 'byName', options: '%s\\%s' % [rowField, columnField] },
          properties: [
            { id: 'custom.cellOptions', value: { type: 'auto' } },
            { id: 'displayName', value: '%s ↓ / %s →' % [rowField, columnField] },
          ],
        }],
      },
    },

  // Ids from 1 and grid positions: panels fill rows of 24 columns left to
  // right; a row panel or a panel that does not fit starts a new line, and a
  // repeated panel has its line to itself (its copies fill it).
  layout(panels)::
    local place(acc, p) =
      local w = p.gridPos.w;
      local newLine = p.type == 'row' || acc.x + w > 24;
      local x = if newLine then 0 else acc.x;
      local y = if newLine then acc.y + acc.h else acc.y;
      {
        x: if std.objectHas(p, 'repeat') then 24 else x + w,
        y: y,
        h: if newLine then p.gridPos.h else std.max(acc.h, p.gridPos.h),
        out: acc.out + [p { id: std.length(acc.out) + 1, gridPos: { x: x, y: y, w: w, h: p.gridPos.h } }],
      };
    std.foldl(place, panels, { x: 0, y: 0, h: 0, out: [] }).out,

  variable(name, label, query, multi=true, includeAll=true):: {
    type: 'query',
    name: name,
    label: label,
    datasource: datasource,
    definition: query,
    query: { query: query, refId: 'StandardVariableQuery' },
    current: {},
    hide: 0,
    multi: multi,
    includeAll: includeAll,
    [if includeAll then 'allValue']: '.+',
    options: [],
    refresh: 2,
    regex: '',
    sort: 1,
    skipUrlSync: false,
  },

  // With a cluster label, every grouping that keeps a target's identity
  // (instance, job) keeps the cluster too: the queries are written without
  // it, and this adds it to each `on(...)` and `by (...)` that names job.
  withCluster(expr, clusterLabel)::
    if clusterLabel == '' then expr else
      std.foldl(function(e, kw) std.strReplace(std.strReplace(e, kw + 'instance, job', kw + clusterLabel + ', instance, job'),
                                               kw + 'job,',
                                               kw + clusterLabel + ', job,'),
                ['on(', 'by ('],
                expr),

  local scoped(panel, clusterLabel) =
    panel + (if std.objectHas(panel, 'targets') then {
               targets: [t { expr: $.withCluster(t.expr, clusterLabel) } for t in panel.targets],
             } else {}),

  dashboard(uid, title, description, variables, panels, annotations=[], clusterLabel=''):: {
    uid: uid,
    title: title,
    description: description,
    tags: ['numaprobe', 'numa'],
    id: null,
    editable: false,
    graphTooltip: 1,
    schemaVersion: 38,
    refresh: '1m',
    time: { from: 'now-24h', to: 'now' },
    timezone: '',
    fiscalYearStartMonth: 0,
    liveNow: false,
    style: 'dark',
    version: 1,
    weekStart: '',
    timepicker: {},
    __inputs: [],
    __requires: [],
    links: [{
      type: 'dashboards',
      tags: ['numaprobe'],
      asDropdown: false,
      includeVars: true,
      keepTime: true,
      targetBlank: false,
      title: 'numaprobe',
      icon: 'external link',
    }],
    annotations: {
      list: [{
        builtIn: 1,
        datasource: { type: 'grafana', uid: '-- Grafana --' },
        enable: true,
        hide: true,
        iconColor: 'rgba(0, 211, 255, 1)',
        name: 'Annotations & Alerts',
        type: 'dashboard',
      }] + [a { datasource: datasource, expr: $.withCluster(a.expr, clusterLabel) } for a in annotations],
    },
    templating: {
      list: [{
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
      }] + variables,
    },
    panels: $.layout([scoped(p, clusterLabel) for p in panels]),
  },
}
