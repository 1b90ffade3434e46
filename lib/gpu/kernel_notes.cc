#include "gpu/kernel_notes.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "gpuprobe/detail/gate.hpp"

namespace gpuprobe::gpu {
namespace {

// Bounded: launches beyond this between two drains are recorded without their note (counted).
constexpr std::size_t kMaxQueued = 65536;

// CUDA-event offsets from an anchor are floats of milliseconds; renewing the anchor keeps them
// short enough to stay exact to a fraction of a microsecond.
constexpr std::chrono::seconds kAnchorLifetime{10};

bool is_launch(const GpuActivity& a) {
  const bool api = a.kind == GpuActivityKind::kRuntimeApi || a.kind == GpuActivityKind::kDriverApi;
  return api &&
         (std::strncmp(a.name, "cudaLaunch", 10) == 0 || std::strncmp(a.name, "cuLaunch", 8) == 0);
}

}  // namespace

KernelNoteQueue& KernelNoteQueue::get() {
  static KernelNoteQueue* queue = new KernelNoteQueue;
  return *queue;
}

void KernelNoteQueue::destroy_events(const detail::KernelNote& note) {
  if (note.ops == nullptr) return;
  if (note.start_event != nullptr) note.ops->destroy(note.start_event);
  if (note.end_event != nullptr) note.ops->destroy(note.end_event);
}

void KernelNoteQueue::begin_session(bool cupti) {
  std::lock_guard<std::mutex> lock(mu_);
  active_ = true;
  cupti_ = cupti;
  overflowed_ = 0;
}

void KernelNoteQueue::end_session() {
  std::lock_guard<std::mutex> lock(mu_);
  active_ = false;
  cupti_ = false;
  for (const detail::KernelNote& note : notes_) destroy_events(note);
  notes_.clear();
  for (const auto& [device, anchor] : anchors_) anchor.ops->destroy(anchor.event);
  for (const Anchor& anchor : retired_) anchor.ops->destroy(anchor.event);
  anchors_.clear();
  retired_.clear();
}

bool KernelNoteQueue::cupti_recording() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cupti_;
}

bool KernelNoteQueue::push(const detail::KernelNote& note) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_) return false;
  if (notes_.size() >= kMaxQueued) {
    ++overflowed_;
    return false;
  }
  notes_.push_back(note);
  return true;
}

void KernelNoteQueue::take(std::vector<detail::KernelNote>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  out->insert(out->end(), notes_.begin(), notes_.end());
  notes_.clear();
}

void* KernelNoteQueue::anchor(std::uint32_t device,
                              void* (*record_and_sync)(std::uint64_t, std::uint64_t*),
                              const detail::CudaEventOps* ops, std::uint64_t* ticks) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_) return nullptr;
  const auto now = std::chrono::steady_clock::now();
  const auto current = anchors_.find(device);
  if (current != anchors_.end() && now - current->second.made < kAnchorLifetime) {
    *ticks = current->second.ticks;
    return current->second.event;
  }
  const std::uint64_t gate = detail::g_gate.load(std::memory_order_relaxed);
  std::uint64_t at = 0;
  void* event = record_and_sync(gate, &at);
  if (event == nullptr) return nullptr;
  // A replaced anchor may still be named by queued notes: it is destroyed with the session.
  if (current != anchors_.end()) retired_.push_back(current->second);
  anchors_[device] = Anchor{event, at, ops, now};
  *ticks = at;
  return event;
}

std::uint64_t KernelNoteQueue::overflowed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return overflowed_;
}

void KernelNoteTracker::collect() { KernelNoteQueue::get().take(&notes_); }

void KernelNoteTracker::annotate(std::vector<GpuActivity>* activities, std::size_t first,
                                 std::uint64_t now) {
  const auto begin = activities->begin() + static_cast<std::ptrdiff_t>(first);
  // Launch calls first: each takes the note whose launch() call surrounds it on its thread.
  for (auto it = begin; it != activities->end(); ++it) {
    const GpuActivity& a = *it;
    if (!is_launch(a)) continue;
    for (const detail::KernelNote& note : notes_) {
      if (note.cupti_thread_id == a.thread_id && note.begin <= a.start && a.end <= note.end) {
        by_correlation_[a.correlation] = Cost{note.bytes, note.flops, note.begin};
        break;
      }
    }
  }
  for (auto it = begin; it != activities->end(); ++it) {
    GpuActivity& a = *it;
    if (a.kind != GpuActivityKind::kKernel) continue;
    if (const auto it = by_correlation_.find(a.correlation); it != by_correlation_.end()) {
      a.declared_bytes = it->second.bytes;
      a.declared_flops = it->second.flops;
    }
  }
  const std::uint64_t cutoff = now > horizon_ ? now - horizon_ : 0;
  notes_.erase(std::remove_if(notes_.begin(), notes_.end(),
                              [cutoff](const detail::KernelNote& n) { return n.end < cutoff; }),
               notes_.end());
  for (auto it = by_correlation_.begin(); it != by_correlation_.end();) {
    it = it->second.launched < cutoff ? by_correlation_.erase(it) : std::next(it);
  }
}

void KernelNoteTracker::timed(bool final, std::vector<GpuActivity>* out) {
  const auto done = [&](detail::KernelNote& note) {
    if (note.start_event == nullptr || note.ops == nullptr) {
      ++untimed_;  // no events: the anchor could not be made
      return true;
    }
    const int state = note.ops->query(note.end_event);
    if (state == 0 && !final) return false;
    // The start's offset from the anchor, and the duration between the kernel's own events: a
    // float of milliseconds is exact to well under a microsecond only over short spans, which
    // is why anchors are renewed (KernelNoteQueue::anchor) and durations taken directly.
    float start_ms = 0, duration_ms = 0;
    const bool timed = state == 1 &&
                       note.ops->elapsed_ms(note.anchor_event, note.start_event, &start_ms) &&
                       note.ops->elapsed_ms(note.start_event, note.end_event, &duration_ms);
    if (timed) {
      GpuActivity a;
      a.kind = GpuActivityKind::kKernel;
      a.name = note.site->name;
      a.range = note.site;
      const auto ticks = [this](float ms) {
        return static_cast<std::uint64_t>(std::llround(ms * 1e6 / ns_per_tick_));
      };
      a.start = note.anchor_ticks + ticks(start_ms);
      a.end = a.start + ticks(duration_ms);
      a.device = note.device;
      a.stream = static_cast<std::uint32_t>(note.stream);
      for (int i = 0; i < 3; ++i) {
        a.grid[i] = static_cast<std::int32_t>(note.grid[i]);
        a.block[i] = static_cast<std::int32_t>(note.block[i]);
      }
      a.dynamic_shared_memory = static_cast<std::int32_t>(note.dynamic_shared_memory);
      a.declared_bytes = note.bytes;
      a.declared_flops = note.flops;
      out->push_back(a);
    } else {
      ++untimed_;
    }
    note.ops->destroy(note.start_event);
    note.ops->destroy(note.end_event);
    return true;
  };
  notes_.erase(std::remove_if(notes_.begin(), notes_.end(), done), notes_.end());
}

}  // namespace gpuprobe::gpu

namespace gpuprobe::detail {

bool note_kernel_launch(const KernelNote& note) noexcept {
  try {
    KernelNote copy = note;
    copy.cupti_thread_id = static_cast<std::uint32_t>(pthread_self());
    return gpu::KernelNoteQueue::get().push(copy);
  } catch (...) {
    return false;
  }
}

bool cupti_recording() noexcept { return gpu::KernelNoteQueue::get().cupti_recording(); }

void* event_anchor(std::uint32_t device, void* (*record_and_sync)(std::uint64_t, std::uint64_t*),
                   const CudaEventOps* ops, std::uint64_t* anchor_ticks) noexcept {
  try {
    return gpu::KernelNoteQueue::get().anchor(device, record_and_sync, ops, anchor_ticks);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace gpuprobe::detail
