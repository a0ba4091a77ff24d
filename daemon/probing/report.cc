// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/report.h"

#include <algorithm>

namespace numaprobe::daemon {

bool ProbeReport::all_ok() const {
  return std::all_of(records.begin(), records.end(), [](const RecordPtr& r) { return r->ok(); });
}

std::vector<RecordPtr> ProbeReport::Of(const ProbeKind& kind) const {
  std::vector<RecordPtr> of;
  for (const RecordPtr& r : records) {
    if (&r->kind() == &kind) of.push_back(r);
  }
  return of;
}

}  // namespace numaprobe::daemon
