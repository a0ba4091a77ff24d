// SPDX-License-Identifier: Apache-2.0
// Test helper for tests/integration/test_state_kill.py: drives the daemon's
// real state write path (FormatState, then WriteStateFile: temp file, fsync,
// rename, fsync of the directory) so the test can SIGKILL it at random
// moments.
//
//   state_write_loop write DIR   saves state "a", prints "ready", then
//                                saves "b", "a", "b", ... until killed
//   state_write_loop check DIR   reads DIR/state.json with ReadStateFile and
//                                ParseState and prints "a" or "b" if it is
//                                exactly one of the two; otherwise prints
//                                why, exits 1
//
// The two states have the same shape and different contents, and are large
// (2000 series with recent figures, ~400 KB) so a write spans many pages: a
// torn or mixed file cannot pass as either.
#include <cstdio>
#include <string>
#include <string_view>

#include "daemon/serve/results/state_file.h"
#include "daemon/serve/state.h"

namespace {

namespace np = numaprobe::daemon;

constexpr int kSeries = 2000;

np::StateContents Version(char which) {
  np::StateContents state;
  const double offset = which == 'a' ? 1000 : 2000;
  state.host.fingerprint = std::string(16, which);
  state.host.topology = "nodes=0;distances=10";
  state.host.origin = "first_start";
  state.host.since = which == 'a' ? "2026-01-01T00:00:00Z" : "2026-02-02T00:00:00Z";
  state.host.facts = {{"kernel", std::string(1, which)}};
  state.settings = {{"latency", std::string("version=") + which}};
  for (int i = 0; i < kSeries; ++i) {
    const np::SeriesKey key{"latency", i, i % 8, (i / 8) % 8, std::string("op-") + which};
    state.series.emplace(key, np::SeriesHistory::Restored({offset + i, offset + i + 0.5}, {}, -1,
                                                          np::ArmedBaseline{offset + i, 0.001 * i, 1.7e9, 15}));
  }
  return state;
}

std::string Text(const np::StateContents& state) {
  std::string error;
  return np::FormatState(state, error).value_or("");
}

int Write(const std::string& dir) {
  const std::string a = Text(Version('a'));
  const std::string b = Text(Version('b'));
  if (auto error = np::WriteStateFile(dir, np::kStateFile, a); !error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  for (bool next_b = true;; next_b = !next_b) {
    if (auto error = np::WriteStateFile(dir, np::kStateFile, next_b ? b : a); !error.empty()) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
  }
}

int Check(const std::string& dir) {
  const np::StoredText stored = np::ReadStateFile(dir, np::kStateFile);
  if (stored.status != np::StoredText::Status::kOk) {
    std::printf("missing or unreadable: %s/state.json %s\n", dir.c_str(), stored.error.c_str());
    return 1;
  }
  const np::LoadedState state = np::ParseState(stored.text, dir + "/state.json");
  if (state.status != np::LoadedState::Status::kOk || !state.contents) {
    std::printf("corrupt: %s\n", state.error.c_str());
    return 1;
  }
  // The same contents written again give the same text: a file is exactly
  // one version if it formats to that version's text.
  const std::string again = Text(*state.contents);
  for (const char which : {'a', 'b'}) {
    if (again == Text(Version(which))) {
      std::printf("%c\n", which);
      return 0;
    }
  }
  std::printf("mixed: a valid file that is neither version (fingerprint %s, %zu series)\n",
              state.contents->host.fingerprint.c_str(), state.contents->series.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc == 3 ? argv[1] : "";
  if (mode == "write") return Write(argv[2]);
  if (mode == "check") return Check(argv[2]);
  std::fprintf(stderr, "usage: state_write_loop write|check DIR\n");
  return 2;
}
