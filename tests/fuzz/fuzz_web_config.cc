// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the --web.config.file parser (ParseWebConfig) and the basic-auth
// header check (BasicAuth::Allows, a cost-4 bcrypt hash so executions stay fast).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "daemon/config/web_config.h"
#include "daemon/web/web_security.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numaprobe::daemon;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const WebConfigResult r = ParseWebConfig(text);
  if (const auto* errors = std::get_if<std::vector<ConfigError>>(&r)) {
    if (errors->empty()) std::abort();
  }
  // "secret", bcrypt cost 4.
  static const BasicAuth auth(
      std::map<std::string, std::string>{{"alice", "$2y$04$vtz66eFXt7WfQ.xZnb./Oe7KXe2fyup8JrGPdoFOteBnS36QVdY9i"}});
  const bool allowed = auth.Allows(text.c_str());
  // Only alice's real password may pass: "Basic " + base64("alice:secret"), give or take spaces and case.
  if (allowed && text.find("YWxpY2U6c2VjcmV0") == std::string::npos) std::abort();
  return 0;
}
