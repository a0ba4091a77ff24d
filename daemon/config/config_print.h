// SPDX-License-Identifier: Apache-2.0
// The effective configuration as YAML: every key, in the order of the
// documented reference (docs/numaprobe.reference.yaml), with the value a
// Config holds, defaults included. `numaprobe check-config --print FILE` shows
// what the daemon would run with; ParseConfig of the text gives the same
// Config back (tests/daemon/config_print_test.cc).
#pragma once

#include <string>

#include "daemon/config/config.h"
#include "daemon/config/kind_section.h"

namespace numaprobe::daemon {

// `kinds`: the probe kinds' sections (probing/probe_table.h), which know their
// own keys: each is asked to read its section back from `config`'s values.
std::string FormatConfig(const Config& config, const KindSections& kinds);

}  // namespace numaprobe::daemon
