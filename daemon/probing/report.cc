#include "daemon/probing/report.h"

#include <algorithm>

namespace numaprobe::daemon {

bool ProbeReport::all_ok() const {
  auto ok = [](const auto& record) { return record.result.outcome == kernels::Outcome::kOk; };
  return std::all_of(latency.begin(), latency.end(), ok) && std::all_of(bandwidth.begin(), bandwidth.end(), ok) &&
         std::all_of(c2c.begin(), c2c.end(), ok);
}

}  // namespace numaprobe::daemon
