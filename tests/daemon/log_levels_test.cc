// SPDX-License-Identifier: Apache-2.0
// Unit tests for the level names of daemon/common/log.cc: node_exporter's
// debug, info, warn and error, in both --log.format values, and --log.level
// filtering by the same four words.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/common/log.h"

namespace numaprobe::daemon {
namespace {

// Everything the daemon's logger writes to stderr while `log` runs.
template <class Log>
std::vector<std::string> StderrLines(const std::string& level, const std::string& format, Log log) {
  const auto previous = spdlog::default_logger();
  char path[] = "/tmp/numaprobe_log_levels_XXXXXX";
  const int file = mkstemp(path);
  EXPECT_GE(file, 0);
  fflush(stderr);
  const int saved = dup(2);
  dup2(file, 2);
  EXPECT_EQ(SetUpLogging(level, format), "");
  log();
  spdlog::default_logger()->flush();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(file);
  spdlog::set_default_logger(previous);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::remove(path);
  return lines;
}

void OneOfEach() {
  spdlog::debug("d");
  spdlog::info("i");
  spdlog::warn("w");
  spdlog::error("e");
}

TEST(LogLevels, LogfmtNamesTheFourLevelsAsNodeExporterDoes) {
  const std::vector<std::string> lines = StderrLines("debug", "logfmt", OneOfEach);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find(" level=debug msg=\"d\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(" level=info msg=\"i\""), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(" level=warn msg=\"w\""), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(" level=error msg=\"e\""), std::string::npos) << lines[3];
}

TEST(LogLevels, JsonNamesTheFourLevelsAsNodeExporterDoes) {
  const std::vector<std::string> lines = StderrLines("debug", "json", OneOfEach);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find(R"("level":"debug","msg":"d"})"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(R"("level":"info","msg":"i"})"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(R"("level":"warn","msg":"w"})"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(R"("level":"error","msg":"e"})"), std::string::npos) << lines[3];
}

TEST(LogLevels, SpdlogsOtherLevelsMapToTheNearestOfTheFour) {
  const std::vector<std::string> lines = StderrLines("debug", "logfmt", [] {
    spdlog::default_logger()->set_level(spdlog::level::trace);
    spdlog::trace("t");
    spdlog::critical("c");
  });
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find(" level=debug msg=\"t\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(" level=error msg=\"c\""), std::string::npos) << lines[1];
}

TEST(LogLevels, LevelFlagKeepsThatLevelAndAbove) {
  const std::vector<std::string> lines = StderrLines("warn", "logfmt", OneOfEach);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find(" level=warn "), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(" level=error "), std::string::npos) << lines[1];
  EXPECT_EQ(SetUpLogging("warning", "logfmt"), "--log.level: 'warning' is not one of debug, info, warn, error");
}

}  // namespace
}  // namespace numaprobe::daemon
