// SPDX-License-Identifier: Apache-2.0
// Prepared probe buffers, one per (buffer name, memory node).
//
// The daemon frees them after every visit (EndProbe; a visit is the probes
// that share buffers, run back to back: scheduler.h): resident memory between
// probes is then the process alone (tens of MiB), like any exporter, instead
// of every node's buffers (hundreds of MiB on every host of a fleet). The
// price is preparing a buffer (allocate, bind, fault in, verify placement,
// link the chase) for each probe, which the duty-cycle budget charges like
// the measurement, so kinds keep their buffers small. `numaprobe probe`, a
// one-off, keeps them for the whole run (keep_between_probes). Within a probe
// the buffers stay inside a byte budget. A buffer whose pages were found on
// the wrong node is dropped (Drop) so the next probe builds a fresh one.
//
// The pool knows no kind: a kind's module names its buffers, says what they
// are made of (the recipe) and builds them (probing/kinds/).
//
// Thread safety: not thread-safe; owned by the one thread that runs probes.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/result.h"

namespace numaprobe::daemon {

struct BufferSettings {
  kernels::PagePolicy pages = kernels::PagePolicy::kAuto;
  std::size_t budget_bytes = 0;  // 0: unlimited
  bool keep_between_probes = false;
  bool operator==(const BufferSettings&) const = default;
};

class BufferPool {
 public:
  explicit BufferPool(BufferSettings settings) : settings_(settings) {}

  // The buffer `name` of `node`, built by `make` on first use. `recipe` is
  // what the buffer is made of (its settings as text): a kept buffer made
  // from another recipe is rebuilt, never handed out. `bytes` is the size
  // `make` asks for, checked against the budget first (0: not known before).
  // `Buffer` reports its size as info().bytes.
  template <class Buffer>
  kernels::Expected<Buffer*> Get(std::string_view name, int node, const std::string& recipe, std::size_t bytes,
                                 const std::function<kernels::Expected<Buffer>()>& make) {
    if (Held* hit = Find(name, node, recipe)) return &static_cast<HeldOf<Buffer>*>(hit)->buffer;
    if (auto failure = MakeRoom(bytes, node)) return *failure;
    auto made = make();
    if (!made.ok()) return made.failure();
    auto held = std::make_unique<HeldOf<Buffer>>(std::move(made).value());
    Buffer* raw = &held->buffer;
    entries_.push_front(Entry{std::string(name), node, recipe, std::move(held)});
    return raw;
  }

  void Drop(std::string_view name, int node);
  // Frees every buffer unless keep_between_probes (the daemon calls it
  // after each visit, see ProbeRunner::ReleaseBuffers).
  void EndProbe();
  std::size_t bytes_in_use() const;
  const BufferSettings& settings() const { return settings_; }

 private:
  struct Held {
    virtual ~Held() = default;
    virtual std::size_t bytes() const = 0;
  };
  template <class Buffer>
  struct HeldOf final : Held {
    explicit HeldOf(Buffer b) : buffer(std::move(b)) {}
    std::size_t bytes() const override { return buffer.info().bytes; }
    Buffer buffer;
  };
  struct Entry {
    std::string name;
    int node;
    std::string recipe;
    std::unique_ptr<Held> held;
  };
  // A hit moves to the front (most recent); an entry of another recipe is freed.
  Held* Find(std::string_view name, int node, const std::string& recipe);
  // Evicts least recently used entries until `bytes` more fit in the budget.
  std::optional<kernels::Failure> MakeRoom(std::size_t bytes, int node);
  BufferSettings settings_;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace numaprobe::daemon
