// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/probe_settings.h"

#include "daemon/probing/probe_table.h"

namespace numaprobe::daemon {

ProbeSettings ProbeSettingsFrom(const Config& config) {
  ProbeSettings settings;
  for (const ProbeKind* kind : ProbeTable()) kind->AddSettings(config, settings);
  return settings;
}

FigureContext FigureContextFrom(const Config& config) {
  FigureContext context;
  context.per_cpu = config.targets.per_cpu;
  for (const ProbeKind* kind : ProbeTable()) kind->AddFigureContext(config, context);
  return context;
}

BufferSettings BufferSettingsFrom(const Config& config) {
  BufferSettings settings;
  settings.pages = config.memory.pages;
  settings.budget_bytes = config.memory.budget_bytes;
  return settings;
}

}  // namespace numaprobe::daemon
