// Test helper for tests/integration/test_state_kill.py: drives the daemon's
// real state write path (SaveState: temp file, fsync, rename, fsync of the
// directory) so the test can SIGKILL it at random moments.
//
//   state_write_loop write DIR   saves baseline "a", prints "ready", then
//                                saves "b", "a", "b", ... until killed
//   state_write_loop check DIR   loads DIR/state.json with LoadState and
//                                prints "a" or "b" if it is exactly one of
//                                the two; otherwise prints why, exits 1
//
// The two baselines have the same shape and different contents, and are
// large (~2000 values, ~300 KB) so a write spans many pages: a torn or mixed
// file cannot pass as either.
#include <cstdio>
#include <string>
#include <string_view>

#include "daemon/serve/state.h"

namespace {

using numaprobe::daemon::Baseline;

constexpr int kValues = 2000;

Baseline Version(char which) {
  Baseline b;
  const double offset = which == 'a' ? 1000 : 2000;
  b.fingerprint = std::string(16, which);
  b.settings = std::string("version=") + which;
  b.topology = "nodes=0;distances=10";
  b.created = which == 'a' ? "2026-01-01T00:00:00Z" : "2026-02-02T00:00:00Z";
  b.facts = {{"kernel", std::string(1, which)}};
  b.complete = true;
  for (int i = 0; i < kValues; ++i) {
    b.values.push_back({"latency", i, i % 8, (i / 8) % 8, std::string("op-") + which, offset + i});
    b.spread.push_back({"latency", i, i % 8, (i / 8) % 8, std::string("op-") + which, 0.001 * i});
  }
  return b;
}

bool SameValues(const std::vector<numaprobe::daemon::BaselineValue>& x,
                const std::vector<numaprobe::daemon::BaselineValue>& y) {
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i].probe != y[i].probe || x[i].cpu != y[i].cpu || x[i].cpu_node != y[i].cpu_node ||
        x[i].mem_node != y[i].mem_node || x[i].op != y[i].op || x[i].value != y[i].value) {
      return false;
    }
  }
  return true;
}

bool Same(const Baseline& x, const Baseline& y) {
  return x.fingerprint == y.fingerprint && x.settings == y.settings && x.topology == y.topology &&
         x.created == y.created && x.facts == y.facts && x.complete == y.complete && SameValues(x.values, y.values) &&
         SameValues(x.spread, y.spread) && x.changes.empty() && y.changes.empty();
}

int Write(const std::string& dir) {
  const Baseline a = Version('a');
  const Baseline b = Version('b');
  if (auto error = numaprobe::daemon::SaveState(dir, a); !error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  for (bool next_b = true;; next_b = !next_b) {
    if (auto error = numaprobe::daemon::SaveState(dir, next_b ? b : a); !error.empty()) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
  }
}

int Check(const std::string& dir) {
  using numaprobe::daemon::LoadedState;
  const LoadedState state = numaprobe::daemon::LoadState(dir);
  if (state.status == LoadedState::Status::kMissing) {
    std::printf("missing: no %s/state.json\n", dir.c_str());
    return 1;
  }
  if (state.status == LoadedState::Status::kCorrupt) {
    std::printf("corrupt: %s\n", state.error.c_str());
    return 1;
  }
  if (!state.baseline) {
    std::printf("unexpected: a marker (%s), not a baseline\n", state.marker.c_str());
    return 1;
  }
  for (const char which : {'a', 'b'}) {
    if (Same(*state.baseline, Version(which))) {
      std::printf("%c\n", which);
      return 0;
    }
  }
  std::printf("mixed: a valid file that is neither version (fingerprint %s, %zu values)\n",
              state.baseline->fingerprint.c_str(), state.baseline->values.size());
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
