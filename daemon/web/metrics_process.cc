// SPDX-License-Identifier: Apache-2.0
// process_* metrics as the Prometheus client libraries define them
// (client_golang's process collector; process_threads as in client_rust),
// read from procfs: prometheus-cpp 1.0.1 ships no process collector.
// Taken at scrape time, as every client library does, so each scrape pays
// only for what can change: /proc/self/stat and the fd directory are read each
// time; the boot time (/proc/stat, whose size grows with the CPU count) once;
// the fd limit comes from getrlimit rather than formatting /proc/self/limits.
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/web/family_builder.h"
#include "daemon/web/metrics.h"
#include "kernels/file_read.h"

namespace numaprobe::daemon {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

using kernels::ReadSmallFile;

// The fields of /proc/<pid>/stat we use (proc(5) numbering in comments).
struct ProcStat {
  double utime_ticks = 0;      // (14)
  double stime_ticks = 0;      // (15)
  double num_threads = 0;      // (20)
  double starttime_ticks = 0;  // (22) since boot
  double vsize_bytes = 0;      // (23)
  double rss_pages = 0;        // (24)
};

std::optional<ProcStat> ParseProcStat(const std::string& text) {
  // comm (2) may hold spaces and parentheses: fields restart after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(text.substr(close + 1));
  std::vector<std::string> fields;  // fields[0] is field (3), state
  for (std::string field; in >> field;) fields.push_back(field);
  if (fields.size() < 22) return std::nullopt;
  auto field = [&](int number) { return std::stod(fields[static_cast<std::size_t>(number - 3)]); };
  try {
    return ProcStat{field(14), field(15), field(20), field(22), field(23), field(24)};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// "btime <unix seconds>" of /proc/stat: when the system booted.
std::optional<double> ParseBootTime(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) != 0) continue;
    try {
      return std::stod(line.substr(6));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// Entries of /proc/<pid>/fd (the descriptor reading it included, as in client_golang).
std::optional<double> CountOpenFds(const std::string& fd_dir) {
  DIR* dir = opendir(fd_dir.c_str());
  if (dir == nullptr) return std::nullopt;
  double count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

// The soft RLIMIT_NOFILE; none if unlimited.
std::optional<double> MaxFds() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<double>(limit.rlim_cur);
}

void AddSingle(const char* name, const char* help, std::optional<double> value, std::vector<MetricFamily>& out,
               MetricType type = MetricType::Gauge) {
  if (!value) return;
  FamilyBuilder family(name, help, type);
  family.Add({}, *value);
  out.push_back(family.Build());
}

}  // namespace

ProcessMetrics::ProcessMetrics(const std::string& proc_root)
    : self_stat_path_(proc_root + "/self/stat"), fd_dir_(proc_root + "/self/fd") {
  if (auto text = ReadSmallFile(proc_root + "/stat")) boot_unix_seconds_ = ParseBootTime(*text);
}

std::vector<MetricFamily> ProcessMetrics::Families() const {
  std::vector<MetricFamily> out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::optional<ProcStat> stat;
  if (auto text = ReadSmallFile(self_stat_path_)) stat = ParseProcStat(*text);

  auto from_stat = [&](auto compute) -> std::optional<double> {
    return stat ? std::optional<double>(compute(*stat)) : std::nullopt;
  };
  AddSingle("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
            from_stat([&](const ProcStat& s) { return (s.utime_ticks + s.stime_ticks) / ticks; }), out,
            MetricType::Counter);
  AddSingle("process_open_fds", "Number of open file descriptors.", CountOpenFds(fd_dir_), out);
  AddSingle("process_max_fds", "Maximum number of open file descriptors.", MaxFds(), out);
  AddSingle("process_virtual_memory_bytes", "Virtual memory size in bytes.",
            from_stat([](const ProcStat& s) { return s.vsize_bytes; }), out);
  AddSingle("process_resident_memory_bytes", "Resident memory size in bytes.",
            from_stat([&](const ProcStat& s) { return s.rss_pages * page; }), out);
  AddSingle("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
            stat && boot_unix_seconds_ ? std::optional<double>(*boot_unix_seconds_ + stat->starttime_ticks / ticks)
                                       : std::nullopt,
            out);
  AddSingle("process_threads", "Number of OS threads in the process.",
            from_stat([](const ProcStat& s) { return s.num_threads; }), out);
  return out;
}

}  // namespace numaprobe::daemon
