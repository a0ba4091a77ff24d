// SPDX-License-Identifier: Apache-2.0
// The probe table: every probe kind numaprobe has, in the order a round runs
// them and the views show them. One explicit list (kinds/probe_table.cc), not
// static-initialiser registration, which static libraries silently drop.
#pragma once

#include <string>
#include <vector>

#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

const std::vector<const ProbeKind*>& ProbeTable();

// The kinds' config sections, in table order, for ParseConfig and LoadConfigFile.
const KindSections& ProbeTableSections();

// The names of the kinds test fault injection may scale (KindTraits::test_scaled).
std::vector<std::string> TestScaledKinds();

}  // namespace numaprobe::daemon
