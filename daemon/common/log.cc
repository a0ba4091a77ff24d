#include "daemon/common/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string_view>

namespace numaprobe::daemon {
namespace {

// The message as a quoted, escaped string, so that a reason containing quotes
// or newlines cannot break a logfmt or JSON line.
class QuotedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    dest.push_back('"');
    for (char c : msg.payload) {
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
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            dest.append(std::string_view("?"));
          } else {
            dest.push_back(c);
          }
      }
    }
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
