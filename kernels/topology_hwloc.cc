// SPDX-License-Identifier: Apache-2.0
// Building a Topology from hwloc: the host, an XML export or a synthetic
// description. Everything hwloc-typed stays in this file.
//
// hwloc is loaded with HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED so that CPUs and
// nodes outside our cgroup still appear (and can be reported as disallowed);
// "allowed" is then hwloc's allowed sets intersected with the Restriction,
// because hwloc reads cgroup cpusets but not sched_setaffinity or mempolicy.
#include "kernels/topology.h"

#include <fcntl.h>
#include <hwloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace numaprobe::kernels {
namespace {

// HWLOC_UNKNOWN_INDEX spelled without its C-style cast.
constexpr unsigned kUnknownIndex = UINT_MAX;
// hwloc bitmaps can be infinite; no real machine has more ids than this.
constexpr int kMaxBitmapIds = 1 << 20;

struct HwlocTopologyDeleter {
  void operator()(hwloc_topology* topology) const { hwloc_topology_destroy(topology); }
};
using HwlocTopology = std::unique_ptr<hwloc_topology, HwlocTopologyDeleter>;

// Owns one distances matrix returned by hwloc_distances_get_by_type.
class ScopedDistances {
 public:
  ScopedDistances(hwloc_topology_t topology, unsigned long kind) : topology_(topology) {
    unsigned count = 1;
    if (hwloc_distances_get_by_type(topology_, HWLOC_OBJ_NUMANODE, &count, &distances_, kind, 0) != 0 || count == 0) {
      distances_ = nullptr;
    }
  }
  ~ScopedDistances() {
    if (distances_ != nullptr) hwloc_distances_release(topology_, distances_);
  }
  ScopedDistances(const ScopedDistances&) = delete;
  ScopedDistances& operator=(const ScopedDistances&) = delete;
  const hwloc_distances_s* get() const { return distances_; }

 private:
  hwloc_topology_t topology_;
  hwloc_distances_s* distances_ = nullptr;
};

std::vector<int> BitmapIds(hwloc_const_bitmap_t set) {
  std::vector<int> ids;
  for (int id = hwloc_bitmap_first(set); id >= 0 && id < kMaxBitmapIds; id = hwloc_bitmap_next(set, id)) {
    ids.push_back(id);
  }
  return ids;
}

bool Contains(hwloc_const_bitmap_t set, int id) { return hwloc_bitmap_isset(set, static_cast<unsigned>(id)) != 0; }

int OsIndex(hwloc_obj_t obj) {
  return obj->os_index == kUnknownIndex ? static_cast<int>(obj->logical_index) : static_cast<int>(obj->os_index);
}

hwloc_obj_t AncestorOfType(hwloc_obj_t obj, hwloc_obj_type_t type) {
  for (hwloc_obj_t parent = obj->parent; parent != nullptr; parent = parent->parent) {
    if (parent->type == type) return parent;
  }
  return nullptr;
}

// The last-level cache of a PU: its data/unified cache ancestor of the highest
// level (L3 on most servers, L2 where there is no L3).
hwloc_obj_t LastLevelCache(hwloc_obj_t pu) {
  hwloc_obj_t best = nullptr;
  for (hwloc_obj_t parent = pu->parent; parent != nullptr; parent = parent->parent) {
    if (hwloc_obj_type_is_dcache(parent->type) &&
        (best == nullptr || parent->attr->cache.depth > best->attr->cache.depth)) {
      best = parent;
    }
  }
  return best;
}

Failure HwlocFailure(std::string_view what) {
  std::string reason = "hwloc: ";
  reason += what;
  if (errno != 0) {
    reason += ": ";
    reason += std::strerror(errno);
  }
  return Failure{Outcome::kInvalidSpec, std::move(reason)};
}

}  // namespace

// Fills a Topology from a loaded hwloc topology. A friend of Topology, so the
// value type keeps no setters.
class TopologyBuilder {
 public:
  TopologyBuilder(hwloc_topology_t hw, const Restriction& restriction) : hw_(hw), restriction_(restriction) {}

  Topology Build() {
    ReadNodes();
    ReadCpus();
    ReadDistances();
    ReadCpuModel();
    return std::move(topology_);
  }

 private:
  void ReadNodes() {
    hwloc_const_nodeset_t allowed = hwloc_topology_get_allowed_nodeset(hw_);
    for (hwloc_obj_t obj = nullptr; (obj = hwloc_get_next_obj_by_type(hw_, HWLOC_OBJ_NUMANODE, obj)) != nullptr;) {
      numa_objs_.push_back(obj);
    }
    std::sort(numa_objs_.begin(), numa_objs_.end(),
              [](hwloc_obj_t a, hwloc_obj_t b) { return OsIndex(a) < OsIndex(b); });
    for (hwloc_obj_t obj : numa_objs_) {
      const int id = OsIndex(obj);
      if (!Contains(allowed, id) || (restriction_.mem_nodes && !restriction_.mem_nodes->contains(id))) continue;
      NodeInfo node;
      node.id = id;
      node.memory_bytes = obj->attr->numanode.local_memory;
      if (obj->subtype != nullptr) node.subtype = obj->subtype;
      topology_.nodes_.push_back(std::move(node));
    }
    for (int id : BitmapIds(hwloc_topology_get_complete_nodeset(hw_))) {
      if (topology_.FindNode(id) == nullptr) topology_.disallowed_nodes_.push_back(id);
    }
  }

  // A CPU's node is the lowest-numbered NUMA node whose cpuset holds it. hwloc
  // gives a CPU-less node (CXL, HBM, PMEM) the cpuset of the CPUs it is closest
  // to, so "cpuset contains the PU" alone would make it look CPU-bearing;
  // firmware numbers the CPU-bearing node of a locality before its CPU-less
  // companions, which the lowest id picks.
  int NodeOf(int cpu) const {
    for (hwloc_obj_t obj : numa_objs_) {
      if (obj->cpuset != nullptr && Contains(obj->cpuset, cpu)) return OsIndex(obj);
    }
    return -1;
  }

  void ReadCpus() {
    // The topology cpuset excludes offline CPUs (they are only in the complete
    // cpuset, without PU objects).
    hwloc_const_cpuset_t online = hwloc_topology_get_topology_cpuset(hw_);
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(hw_);
    std::vector<std::pair<CpuInfo, hwloc_obj_t>> found;  // with its LLC object
    for (hwloc_obj_t pu = nullptr; (pu = hwloc_get_next_obj_by_type(hw_, HWLOC_OBJ_PU, pu)) != nullptr;) {
      const int id = OsIndex(pu);
      if (!Contains(online, id) || !Contains(allowed, id) || (restriction_.cpus && !restriction_.cpus->contains(id))) {
        continue;
      }
      CpuInfo cpu;
      cpu.id = id;
      const hwloc_obj_t core = AncestorOfType(pu, HWLOC_OBJ_CORE);
      cpu.core = core != nullptr ? static_cast<int>(core->logical_index) : -1;
      const hwloc_obj_t package = AncestorOfType(pu, HWLOC_OBJ_PACKAGE);
      cpu.package = package != nullptr ? OsIndex(package) : 0;
      cpu.node = NodeOf(id);
      found.emplace_back(cpu, LastLevelCache(pu));
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first.id < b.first.id; });

    // LLC domains are numbered in order of their lowest allowed CPU.
    std::map<hwloc_obj_t, int> llc_index;
    for (auto& [cpu, cache] : found) {
      if (cache != nullptr) {
        auto [it, inserted] = llc_index.try_emplace(cache, static_cast<int>(topology_.llcs_.size()));
        if (inserted) {
          topology_.llcs_.push_back(LlcInfo{.index = it->second, .bytes = cache->attr->cache.size, .cpus = {}});
        }
        cpu.llc = it->second;
        topology_.llcs_[static_cast<std::size_t>(cpu.llc)].cpus.push_back(cpu.id);
      }
      topology_.cpus_.push_back(cpu);
    }
    for (const CpuInfo& cpu : topology_.cpus_) {
      // NodeInfo::cpus lists a node's own CPUs, so only allowed nodes get any.
      for (NodeInfo& node : topology_.nodes_) {
        if (node.id == cpu.node) node.cpus.push_back(cpu.id);
      }
    }
    for (int id : BitmapIds(hwloc_topology_get_complete_cpuset(hw_))) {
      if (topology_.FindCpu(id) == nullptr) topology_.disallowed_cpus_.push_back(id);
    }
  }

  void ReadDistances() {
    // Linux reports the SLIT as FROM_OS|MEANS_LATENCY; older exports may lack
    // the "means" bit.
    const unsigned long kinds[] = {HWLOC_DISTANCES_KIND_FROM_OS | HWLOC_DISTANCES_KIND_MEANS_LATENCY,
                                   HWLOC_DISTANCES_KIND_FROM_OS};
    for (unsigned long kind : kinds) {
      ScopedDistances distances(hw_, kind);
      const hwloc_distances_s* d = distances.get();
      if (d == nullptr) continue;
      const unsigned n = d->nbobjs;
      for (unsigned i = 0; i < n; ++i) topology_.distance_node_ids_.push_back(OsIndex(d->objs[i]));
      for (unsigned i = 0; i < n * n; ++i) {
        topology_.distances_.push_back(static_cast<int>(std::min<hwloc_uint64_t>(d->values[i], INT_MAX)));
      }
      return;
    }
  }

  void ReadCpuModel() {
    hwloc_obj_t package = hwloc_get_next_obj_by_type(hw_, HWLOC_OBJ_PACKAGE, nullptr);
    const char* model = package != nullptr ? hwloc_obj_get_info_by_name(package, "CPUModel") : nullptr;
    if (model == nullptr) {
      // Some platforms (and synthetic topologies) only annotate the root.
      model = hwloc_obj_get_info_by_name(hwloc_get_root_obj(hw_), "CPUModel");
    }
    topology_.cpu_model = model != nullptr && *model != '\0' ? model : "unknown";
  }

  hwloc_topology_t hw_;
  const Restriction& restriction_;
  Topology topology_;
  std::vector<hwloc_obj_t> numa_objs_;  // every NUMA node, allowed or not, ascending OS index
};

namespace {

enum class Source { kHost, kXml, kSynthetic };

Expected<Topology> Load(Source source, std::string_view text, const Restriction& restriction) {
  errno = 0;
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return HwlocFailure("cannot initialise a topology");
  const HwlocTopology hw(raw);
  if (hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0) {
    return HwlocFailure("cannot set topology flags");
  }
  // hwloc wants NUL-terminated text; a string_view need not be.
  const std::string buffer(text);
  std::string what = "cannot read the host topology";
  int set = 0;
  switch (source) {
    case Source::kHost:
      break;
    case Source::kXml:
      what = "invalid XML topology";
      set = buffer.size() < INT_MAX
                ? hwloc_topology_set_xmlbuffer(raw, buffer.c_str(), static_cast<int>(buffer.size() + 1))
                : -1;
      break;
    case Source::kSynthetic:
      what = "invalid synthetic topology \"" + buffer + "\"";
      set = hwloc_topology_set_synthetic(raw, buffer.c_str());
      break;
  }
  if (set != 0 || hwloc_topology_load(raw) != 0) return HwlocFailure(what);
  return TopologyBuilder(raw, restriction).Build();
}

}  // namespace

Expected<Topology> Topology::FromHost() {
  // hwloc itself reads these two (hwloc_topology_load): the topology is then
  // the description's, and this process's restrictions do not apply to it.
  for (const char* variable : {"HWLOC_XMLFILE", "HWLOC_SYNTHETIC"}) {
    if (const char* value = std::getenv(variable); value != nullptr && *value != '\0') {
      auto described = Load(Source::kHost, {}, Restriction{});
      if (described.ok()) described->described_by = std::string(variable) + "=" + value;
      return described;
    }
  }
  auto topology = Load(Source::kHost, {}, Restriction::FromProcess());
  if (topology.ok() && !topology->has_distances()) topology->ReadKernelDistances();
  return topology;
}

namespace {

// The variables with which hwloc loads a description instead of this machine.
constexpr const char* kDescribingVariables[] = {"HWLOC_XMLFILE", "HWLOC_SYNTHETIC"};

bool Describes(const char* entry) {
  for (const char* variable : kDescribingVariables) {
    const std::size_t n = std::strlen(variable);
    if (std::strncmp(entry, variable, n) == 0 && entry[n] == '=') return true;
  }
  return false;
}

// hwloc's XML of this machine, loaded in a child process whose environment
// lacks the describing variables: hwloc reads them in hwloc_topology_load and
// has no call that ignores them (hwloc_topology_set_components does not stop
// a backend they force), and this process's own environment is never changed.
Expected<std::string> ThisMachineXml() {
  std::vector<char*> clean;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!Describes(*entry)) clean.push_back(*entry);
  }
  clean.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Failure{Outcome::kInvalidSpec, std::string("pipe: ") + strerror(errno)};
  const pid_t child = ::fork();
  if (child < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Failure{Outcome::kInvalidSpec, std::string("fork: ") + strerror(error)};
  }
  if (child == 0) {
    ::close(fds[0]);
    environ = clean.data();
    auto xml = HostTopologyXml();
    if (!xml.ok()) ::_exit(1);
    const std::string& text = xml.value();
    for (std::size_t at = 0; at < text.size();) {
      const ssize_t n = ::write(fds[1], text.data() + at, text.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ::_exit(1);
      at += static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string xml;
  bool timed_out = false;
  for (char buffer[65536];;) {
    // A child stuck (a lock another thread held when it forked) is not waited for.
    pollfd readable{fds[0], POLLIN, 0};
    const int ready = ::poll(&readable, 1, 60'000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = true;
      ::kill(child, SIGKILL);
      break;
    }
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    xml.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || xml.empty()) {
    return Failure{Outcome::kInvalidSpec, timed_out ? "hwloc: this machine's topology took over a minute to load"
                                                    : "hwloc: cannot read this machine's topology"};
  }
  return xml;
}

}  // namespace

Expected<Topology> Topology::FromThisMachine() {
  bool described = false;
  for (const char* variable : kDescribingVariables) {
    if (const char* value = std::getenv(variable); value != nullptr && *value != '\0') described = true;
  }
  if (!described) return FromHost();
  auto xml = ThisMachineXml();
  if (!xml.ok()) return xml.failure();
  auto topology = Load(Source::kXml, xml.value(), Restriction::FromProcess());
  if (topology.ok() && !topology->has_distances()) topology->ReadKernelDistances();
  return topology;
}

Expected<std::string> HostTopologyXml() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return HwlocFailure("cannot initialise a topology");
  const HwlocTopology hw(raw);
  if (hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0 || hwloc_topology_load(raw) != 0) {
    return HwlocFailure("cannot read the host topology");
  }
  char* xml = nullptr;
  int length = 0;
  if (hwloc_topology_export_xmlbuffer(raw, &xml, &length, 0) != 0) return HwlocFailure("cannot export the topology");
  std::string text(xml, length > 0 ? static_cast<std::size_t>(length - 1) : 0);  // without the trailing NUL
  hwloc_free_xmlbuffer(raw, xml);
  return text;
}

Expected<Topology> Topology::FromXml(std::string_view xml, const Restriction& restriction) {
  return Load(Source::kXml, xml, restriction);
}

Expected<Topology> Topology::FromSynthetic(std::string_view description, const Restriction& restriction) {
  return Load(Source::kSynthetic, description, restriction);
}

}  // namespace numaprobe::kernels
