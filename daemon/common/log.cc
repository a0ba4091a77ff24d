// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <iterator>
#include <memory>
#include <string_view>

namespace numaprobe::daemon {
namespace {

// The message as a quoted string of printable ASCII, escaped the same way
// for logfmt and JSON (both read \" \\ \n \t \r and \uXXXX): a reason holding
// quotes, newlines, control bytes or bytes of a file (a key of a hostile
// config, a path) can neither break a line nor make it invalid JSON.
// Characters past ASCII become \uXXXX (a UTF-16 pair beyond U+FFFF), so no
// terminal control or bidirectional override reaches a reader unescaped;
// bytes that are not UTF-8 become \ufffd, as Go's logfmt and JSON encoders
// write them.
void AppendEscaped(std::string_view text, spdlog::memory_buf_t& dest) {
  const auto u_escape = [&](unsigned unit) { fmt::format_to(std::back_inserter(dest), "\\u{:04x}", unit); };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      switch (c) {
        case '"':
          dest.append(std::string_view("\\\""));
          break;
        case '\\':
          dest.append(std::string_view("\\\\"));
          break;
        case '\n':
          dest.append(std::string_view("\\n"));
          break;
        case '\t':
          dest.append(std::string_view("\\t"));
          break;
        case '\r':
          dest.append(std::string_view("\\r"));
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            u_escape(c);
          } else {
            dest.push_back(static_cast<char>(c));
          }
      }
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, then continuation
    // bytes, no overlong forms, no surrogates, nothing past U+10FFFF.
    const std::size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    unsigned code = length == 4 ? c & 0x07u : length == 3 ? c & 0x0fu : c & 0x1fu;
    bool valid = length != 0 && c <= 0xf4 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xc0) == 0x80;
      code = (code << 6) | (next & 0x3fu);
    }
    static constexpr unsigned kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    valid = valid && code >= kMinimum[length] && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
    if (!valid) {
      u_escape(0xfffd);
      ++i;
      continue;
    }
    if (code > 0xffff) {
      u_escape(0xd800 + ((code - 0x10000) >> 10));
      u_escape(0xdc00 + ((code - 0x10000) & 0x3ff));
    } else {
      u_escape(code);
    }
    i += length;
  }
}

class QuotedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    dest.push_back('"');
    AppendEscaped(std::string_view(msg.payload.data(), msg.payload.size()), dest);
    dest.push_back('"');
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<QuotedMessage>(); }
};

// The level as node_exporter (Go's slog through promslog) names it, the same
// four words --log.level takes: spdlog's own %l says "warning", "critical"
// and "trace". Nothing here logs at trace or critical; were it to, they map
// to the nearest of the four.
class LevelName : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    dest.append(Name(msg.level));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<LevelName>(); }

 private:
  static std::string_view Name(spdlog::level::level_enum level) {
    switch (level) {
      case spdlog::level::trace:
      case spdlog::level::debug:
        return "debug";
      case spdlog::level::info:
        return "info";
      case spdlog::level::warn:
        return "warn";
      default:
        return "error";
    }
  }
};

}  // namespace

std::string SetUpLogging(const std::string& level, const std::string& format) {
  const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  // from_str maps anything unknown to "off"; only the four documented names are accepted.
  if (level != "debug" && level != "info" && level != "warn" && level != "error") {
    return "--log.level: '" + level + "' is not one of debug, info, warn, error";
  }
  const char* pattern = nullptr;
  if (format == "logfmt") {
    pattern = "ts=%Y-%m-%dT%H:%M:%S.%eZ level=%~ msg=%*";
  } else if (format == "json") {
    pattern = R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%~","msg":%*})";
  } else {
    return "--log.format: '" + format + "' is not one of logfmt, json";
  }
  auto logger = std::make_shared<spdlog::logger>("numaprobe", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<QuotedMessage>('*').add_flag<LevelName>('~').set_pattern(pattern);
  logger->set_formatter(std::move(formatter));
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
  return "";
}

void SetUpCommandLogging() {
  auto logger = std::make_shared<spdlog::logger>("numaprobe", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern("numaprobe: %v");
  logger->set_level(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace numaprobe::daemon
