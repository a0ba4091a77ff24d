// SPDX-License-Identifier: Apache-2.0
// A remote node pair's deviation from its peers, for any selector: the
// daemon's remote/local ratio of the recent medians over its cohort's median
// (recorded by numaprobe-peer-ratios), minus 1; 0.1 = 10% above the peers.
// The rules reduce it to each host's largest deviation
// (instance:…:peer_deviation_max); this spells it out per pair for whoever
// needs one host's pairs: the peer alert's description and the host
// dashboard. Empty for pairs whose cohort is smaller than peerCohortMin.
{
  // `ratioSelector` selects the host's ratios; `medianSelector` the cohort
  // medians (which carry no instance). `window` '' reads the ratios as they
  // are; a duration reads them through last_over_time (as the alerts do).
  deviation(c, ratioSelector, medianSelector='', window='')::
    local ratio = 'numaprobe_memory_latency_recent_remote_local_ratio{%s}' % ratioSelector;
    '%s / on(%s, %s, cpu_node, mem_node) group_left() cpu_model_cpu_node_mem_node:numaprobe_memory_latency_recent_remote_local_ratio:peer_median%s - 1' % [
      if window == '' then ratio else 'last_over_time(%s[%s])' % [ratio, window],
      c.jobLabels,
      c.cohortLabels,
      if medianSelector == '' then '' else '{%s}' % medianSelector,
    ],
}
