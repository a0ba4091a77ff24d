// SPDX-License-Identifier: Apache-2.0
// Text read from the host (DMI vendor and BIOS strings, boot parameters,
// sysfs values) is whatever bytes firmware and bootloaders wrote. It ends up
// in the state file (JSON) and in Prometheus label values, and both must be
// UTF-8: nlohmann's writer throws on anything else, and Prometheus rejects
// the whole scrape. So every fact is reduced to printable ASCII when it is
// read, each other byte becoming '?': one odd byte can neither end the
// process nor fail a scrape, and the same bytes always give the same text
// (no host change reported on every restart).
#pragma once

#include <string>
#include <string_view>

namespace numaprobe::daemon {

inline std::string PrintableText(std::string_view raw) {
  std::string out(raw);
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

}  // namespace numaprobe::daemon
