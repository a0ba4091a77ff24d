// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/web_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <map>

#include "daemon/config/config_reader.h"

namespace numaprobe::daemon {
namespace {

int LineOf(const YAML::Node& node) { return node.Mark().is_null() ? 0 : node.Mark().line + 1; }

// Keys of the exporter-toolkit format numaprobe does not implement (the
// inline PEM variants of the *_file keys): refused by name rather than
// ignored, so an operator never believes a setting is in force when it is not.
constexpr std::array<std::string_view, 3> kUnsupportedTls = {"cert", "key", "client_ca"};

// The headers the exporter-toolkit accepts in http_server_config.headers.
constexpr std::array<std::string_view, 5> kHeaders = {"Strict-Transport-Security", "X-Content-Type-Options",
                                                      "X-Frame-Options", "X-XSS-Protection", "Content-Security-Policy"};

bool SafeHeaderValue(const std::string& value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u != 0x7f);
  });
}

// A list of strings (absent or null: empty).
void ReadStringList(const YAML::Node& node, const std::string& path, ConfigErrors& errors,
                    std::vector<std::string>& out) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence()) {
    errors.Add(path, LineOf(node), "expected a list of strings");
    return;
  }
  for (const auto& item : node) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      errors.Add(path, LineOf(item), "expected a non-empty string");
      continue;
    }
    out.push_back(item.Scalar());
  }
}

void ReadTls(ConfigSection& top, const YAML::Node& root, ConfigErrors& errors, WebConfig& config) {
  if (!root["tls_server_config"].IsDefined() || root["tls_server_config"].IsNull()) return;
  (void)top;
  ConfigSection section(errors, root["tls_server_config"], "tls_server_config", LineOf(root["tls_server_config"]),
                        {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version", "max_version",
                         "cert", "key", "client_ca", "client_allowed_sans", "cipher_suites",
                         "prefer_server_cipher_suites", "curve_preferences"});
  if (!root["tls_server_config"].IsMap()) return;
  for (std::string_view key : kUnsupportedTls) {
    if (section.Has(key)) section.Error(key, "not supported by numaprobe (use the *_file key); remove it");
  }
  WebConfig::Tls out;
  section.String("cert_file", out.cert_file);
  section.String("key_file", out.key_file);
  if (out.cert_file.empty() && !errors.Has("tls_server_config.cert_file")) {
    section.Error("cert_file", "required when tls_server_config is given");
  }
  if (out.key_file.empty() && !errors.Has("tls_server_config.key_file")) {
    section.Error("key_file", "required when tls_server_config is given");
  }
  if (auto auth = section.Choice("client_auth_type", {"NoClientCert", "RequestClientCert", "RequireAnyClientCert",
                                                      "VerifyClientCertIfGiven", "RequireAndVerifyClientCert"})) {
    out.client_auth = static_cast<WebConfig::ClientAuth>(*auth);
  }
  section.String("client_ca_file", out.client_ca_file);
  const bool verifies = out.client_auth == WebConfig::ClientAuth::kVerifyClientCertIfGiven ||
                        out.client_auth == WebConfig::ClientAuth::kRequireAndVerifyClientCert;
  if (verifies && out.client_ca_file.empty() && !errors.Has("tls_server_config.client_ca_file")) {
    section.Error("client_auth_type", "verifying client certificates needs client_ca_file");
  }
  if (!out.client_ca_file.empty() && !verifies && !errors.Has("tls_server_config.client_auth_type")) {
    section.Error("client_ca_file",
                  "client_ca_file given but client_auth_type does not verify certificates "
                  "(use RequireAndVerifyClientCert or VerifyClientCertIfGiven)");
  }
  // TLS 1.0 and 1.1 are deprecated (RFC 8996): refused rather than offered.
  const std::vector<std::string_view> versions = {"TLS12", "TLS13"};
  for (const char* key : {"min_version", "max_version"}) {
    if (!section.Has(key)) continue;
    std::string text;
    section.String(key, text);
    if (text == "TLS10" || text == "TLS11") {
      section.Error(key, "'" + text + "' is not supported: numaprobe accepts TLS12 or TLS13");
      continue;
    }
    if (errors.Has(std::string("tls_server_config.") + key)) continue;
    if (auto v = section.Choice(key, versions)) {
      (std::string_view(key) == "min_version" ? out.min_version : out.max_version) =
          static_cast<WebConfig::TlsVersion>(*v);
    }
  }
  if (out.min_version > out.max_version) section.Error("max_version", "lower than min_version");
  const YAML::Node node = root["tls_server_config"];
  ReadStringList(node["cipher_suites"], "tls_server_config.cipher_suites", errors, out.cipher_suites);
  ReadStringList(node["curve_preferences"], "tls_server_config.curve_preferences", errors, out.curve_preferences);
  ReadStringList(node["client_allowed_sans"], "tls_server_config.client_allowed_sans", errors, out.client_allowed_sans);
  section.Bool("prefer_server_cipher_suites", out.prefer_server_cipher_suites);
  if (!out.client_allowed_sans.empty() && !verifies) {
    section.Error("client_allowed_sans",
                  "needs a verified client certificate (client_auth_type RequireAndVerifyClientCert or "
                  "VerifyClientCertIfGiven)");
  }
  config.tls = out;
}

// A mapping's entries, in file order (a repeated key twice), each with its line.
struct MapEntry {
  std::string key;
  std::string value;
  int line;
};

void ReadStringMap(const YAML::Node& node, const std::string& path, ConfigErrors& errors, std::vector<MapEntry>& out) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    errors.Add(path, LineOf(node), "expected a mapping");
    return;
  }
  for (const auto& item : node) {
    if (!item.first.IsScalar()) {
      errors.Add(path, LineOf(item.first), "a key must be a name");
      continue;
    }
    const std::string key = item.first.Scalar();
    if (!item.second.IsScalar()) {
      errors.Add(path + "." + key, LineOf(item.second), "expected a string");
      continue;
    }
    out.push_back(MapEntry{key, item.second.Scalar(), LineOf(item.first)});
  }
}

}  // namespace

int BcryptCost(const std::string& hash) {
  if (hash.size() != 60 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' || hash[6] != '$') return 0;
  if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') return 0;
  if (!std::isdigit(static_cast<unsigned char>(hash[4])) || !std::isdigit(static_cast<unsigned char>(hash[5]))) {
    return 0;
  }
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) return 0;
  const bool alphabet = std::all_of(hash.begin() + 7, hash.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '/';
  });
  return alphabet ? cost : 0;
}

WebConfigResult ParseWebConfig(std::string_view yaml_text) {
  ConfigErrors errors;
  WebConfig config;
  try {
    const std::optional<YAML::Node> document = LoadOneDocument(yaml_text, errors);
    if (!document) return std::move(errors).Take();
    const YAML::Node root = *document;
    ConfigSection top(errors, root, "", 0,
                      {"tls_server_config", "http_server_config", "basic_auth_users", "rate_limit"});
    if (root.IsMap()) {
      ReadTls(top, root, errors, config);
      if (top.Has("rate_limit")) top.Error("rate_limit", "not supported by numaprobe; remove it");
      ConfigSection http = top.Section("http_server_config", {"headers", "http2"});
      bool http2 = true;
      http.Bool("http2", http2);  // the server speaks HTTP/1.1 only: either value is honoured by that
      // IsDefined() first: yaml-cpp's lookup of an absent key is a zombie node that throws on IsMap().
      const YAML::Node http_node = root["http_server_config"];
      if (http_node.IsDefined() && http_node.IsMap()) {
        std::vector<MapEntry> headers;
        ReadStringMap(http_node["headers"], "http_server_config.headers", errors, headers);
        for (const auto& header : headers) {
          // Named copies, not a structured binding: clang 14 cannot capture those in the lambda.
          const std::string& name = header.key;
          const std::string& value = header.value;
          const std::string key = "http_server_config.headers." + name;
          const auto* known = std::find_if(kHeaders.begin(), kHeaders.end(), [&](std::string_view h) {
            return h.size() == name.size() && std::equal(h.begin(), h.end(), name.begin(), [](char a, char b) {
                     return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
                   });
          });
          if (known == kHeaders.end()) {
            errors.Add(key, header.line,
                       "header not allowed (allowed: Strict-Transport-Security, "
                       "X-Content-Type-Options, X-Frame-Options, X-XSS-Protection, "
                       "Content-Security-Policy)");
          } else if (!SafeHeaderValue(value)) {
            errors.Add(key, header.line, "the value holds control characters");
          } else {
            config.headers.emplace_back(std::string(*known), value);
          }
        }
      }
      std::vector<MapEntry> users;
      ReadStringMap(root["basic_auth_users"], "basic_auth_users", errors, users);
      std::map<std::string, int> first_line;  // of each user, to name a repeated one
      for (const auto& [user, hash, line] : users) {
        const std::string key = "basic_auth_users." + user;
        const int cost = BcryptCost(hash);
        if (const auto first = first_line.find(user); first != first_line.end()) {
          // yaml-cpp keeps both; which one would win is not for an operator to guess.
          errors.Add(key, line, "user listed twice (first on line " + std::to_string(first->second) + ")");
        } else if (user.empty() || user.find(':') != std::string::npos) {
          errors.Add(key, line, "a user name must be non-empty and hold no ':'");
        } else if (cost == 0) {
          errors.Add(key, line, "not a bcrypt hash ($2a$, $2b$ or $2y$, 60 characters; see `htpasswd -nBC 10 user`)");
        } else if (cost > kMaxBcryptCost) {
          errors.Add(key, line,
                     "bcrypt cost " + std::to_string(cost) + " is above the limit of " +
                         std::to_string(kMaxBcryptCost) +
                         " (each check of a password would hold the server's password checker for seconds); "
                         "hash it again with `htpasswd -nBC 10 user`");
        } else {
          config.basic_auth_users[user] = hash;
        }
        first_line.emplace(user, line);
      }
    }
  } catch (const YAML::Exception& e) {
    errors.Add("", e.mark.is_null() ? 0 : e.mark.line + 1, "invalid YAML: " + e.msg);
  }
  if (errors.empty()) return config;
  return std::move(errors).TakeInFileOrder();
}

WebConfigResult LoadWebConfigFile(const std::string& path) {
  auto text = ReadConfigText(path);
  if (auto* errors = std::get_if<std::vector<ConfigError>>(&text)) return std::move(*errors);
  WebConfigResult result = ParseWebConfig(std::get<std::string>(text));
  if (auto* config = std::get_if<WebConfig>(&result); config != nullptr && config->tls) {
    const std::size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    for (std::string* file : {&config->tls->cert_file, &config->tls->key_file, &config->tls->client_ca_file}) {
      if (!file->empty() && file->front() != '/') *file = dir + *file;
    }
  }
  return result;
}

}  // namespace numaprobe::daemon
