// The ranges Python has open on a thread (a `with`'s, or a hook pair's), shared by the module's
// range type and its asyncio tracks (asyncio_tracks.h). Internal to the module.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "gpuprobe/gpuprobe.hpp"

namespace gpuprobe::python {

struct RangeObject;

// A range Python has begun on this thread and not yet ended: by a `with` (its owner, the range
// object), or by a hook pair (_begin/_end, owner null, known by its id).
struct OpenRange {
  const RangeObject* owner;
  std::uint64_t id;
  ManualRange range;
};

// Ranges open on this thread, oldest first. The state is per thread, never in the range object:
// one `@gpuprobe.range` function runs on several threads at once, and recursion enters one
// object several times. Exits usually come in reverse order; they need not (asyncio tasks
// interleave on one thread), and an exit ends only its own range — plus hook ranges opened
// inside it and left open by a forward that raised.
//
// The first kInlineOpen entries live in the thread's own TLS block, which is constant-initialised
// and trivially destructible: reaching it is one TLS address, with no initialisation guard and no
// heap line, on every entry and exit. Deeper nesting (recursion through a decorated function)
// moves the stack to the heap (t_open_spill).
constexpr std::uint32_t kInlineOpen = 16;

struct alignas(64) OpenStack {
  std::uint32_t size = 0;
  std::uint8_t capacity_shift = 0;  // capacity: kInlineOpen << capacity_shift
  // asyncio was told this thread runs no loop (see current_track).
  bool no_loop_told = false;
  // The session (epoch) in which this thread was last given its threading name (named_for).
  std::uint32_t named_epoch = 0;
  OpenRange* heap = nullptr;  // the spill's storage once spilled, else nullptr: inline_items
  OpenRange inline_items[kInlineOpen] = {};

  std::size_t capacity() const { return std::size_t{kInlineOpen} << capacity_shift; }
  OpenRange* data() { return heap != nullptr ? heap : inline_items; }
  bool empty() const { return size == 0; }
  OpenRange& operator[](std::size_t i) { return data()[i]; }
  OpenRange& back() { return data()[size - 1]; }
  void pop_back() { --size; }
  OpenRange& push(const OpenRange& entry) {
    if (GPUPROBE_UNLIKELY(size == capacity())) grow();
    OpenRange& slot = data()[size++];
    slot = entry;
    return slot;
  }
  void erase(std::size_t i) {
    OpenRange* items = data();
    std::copy(items + i + 1, items + size, items + i);
    --size;
  }
  [[gnu::cold, gnu::noinline]] void grow();
};

}  // namespace gpuprobe::python
