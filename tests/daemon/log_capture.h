// SPDX-License-Identifier: Apache-2.0
// Captures what the daemon logs while a test runs: a sink added to spdlog's
// default logger for the capture's lifetime.
#pragma once

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace numaprobe::daemon {

class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<Sink>()) { spdlog::default_logger()->sinks().push_back(sink_); }
  ~LogCapture() {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // The messages logged so far that contain `needle`, in order.
  std::vector<std::string> Lines(const std::string& needle) const { return sink_->Lines(needle); }

 private:
  class Sink final : public spdlog::sinks::base_sink<std::mutex> {
   public:
    std::vector<std::string> Lines(const std::string& needle) {
      std::lock_guard lock(mutex_);
      std::vector<std::string> found;
      for (const std::string& line : lines_) {
        if (line.find(needle) != std::string::npos) found.push_back(line);
      }
      return found;
    }

   protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
      lines_.emplace_back(msg.payload.begin(), msg.payload.end());
    }
    void flush_() override {}

   private:
    std::vector<std::string> lines_;
  };
  std::shared_ptr<Sink> sink_;
};

}  // namespace numaprobe::daemon
