// SPDX-License-Identifier: Apache-2.0
// The hwloc XML topologies of tests/fixtures/topology/ (its README says what
// host each one is), loaded as the daemon loads the host's: one loader for
// every test that plans, chooses CPUs or schedules on a fixture host.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kernels/topology.h"

namespace numaprobe::daemon {

// The fixture `name` ("8node_2s_snc4.xml") as this process would see it under
// `restriction`; an empty topology, with the test failed, if it does not load.
inline kernels::Topology TopologyFixture(const std::string& name, const kernels::Restriction& restriction = {}) {
  std::ifstream in(std::filesystem::path(NUMAPROBE_FIXTURES) / "topology" / name);
  std::stringstream text;
  text << in.rdbuf();
  auto topology = kernels::Topology::FromXml(text.str(), restriction);
  EXPECT_TRUE(topology.ok()) << name << ": " << (topology.ok() ? "" : topology.failure().reason);
  return topology.ok() ? std::move(topology).value() : kernels::Topology{};
}

}  // namespace numaprobe::daemon
