#include "core/thread_registry.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "gpuprobe/detail/gate.hpp"
#include "gpuprobe/range.hpp"

namespace gpuprobe {
namespace detail {
__thread ThreadRing* t_ring __attribute__((tls_model(GPUPROBE_DETAIL_TLS_MODEL))) = nullptr;
}  // namespace detail

namespace core {
namespace {

// Rings kept for reuse beyond this are freed, so a burst of threads does not pin its memory.
constexpr std::size_t kMaxFreeRings = 64;

// True once this thread's exit hook has run: events recorded later by other thread-local
// destructors are not given a new ring (the hook could not release it).
__thread bool t_exiting = false;

// Releases the thread's ring when the thread exits. Its destructor is registered on first use,
// in acquire_ring(), so threads that never record pay nothing.
struct ThreadExitHook {
  ~ThreadExitHook() {
    t_exiting = true;
    if (detail::t_ring != nullptr) {
      ThreadRegistry::release(static_cast<ThreadState*>(detail::t_ring));
      detail::t_ring = nullptr;
    }
  }
};
thread_local ThreadExitHook t_exit_hook;

// The name given with set_thread_name(), applied to every ring this thread takes.
thread_local std::string t_thread_name;

// The name the thread's language runtime gives it (detail::set_runtime_thread_name): in place
// of the OS name, which a Python thread inherits from the thread that started it.
thread_local std::string t_runtime_name;

// What one ring costs, slots and bookkeeping.
std::uint64_t ring_bytes(std::uint64_t capacity) {
  return capacity * sizeof(detail::Record) + sizeof(ThreadState);
}

std::string os_thread_name() {
  char buf[64] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0) return {};
  return buf;
}

}  // namespace

ThreadRegistry& ThreadRegistry::get() {
  static ThreadRegistry* registry = new ThreadRegistry;
  return *registry;
}

void ThreadRegistry::begin_session(std::uint32_t epoch, std::uint64_t capacity,
                                   std::uint64_t max_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  max_bytes_ = max_bytes;
  lost_without_ring_.store(0, std::memory_order_relaxed);
  if (epoch <= last_epoch_) {
    // Epochs wrapped: a ring still held by a thread idle since the session that had this epoch
    // before would look current to that thread. Clearing it makes the thread take a new ring.
    for (ThreadState* ring : live_) ring->epoch.store(0, std::memory_order_relaxed);
  }
  last_epoch_ = epoch;
  epoch_ = epoch;
  capacity_ = capacity;
  next_index_ = 0;
  const auto wrong_size = [&](const std::unique_ptr<ThreadState>& r) {
    return r->ring.capacity() != capacity;
  };
  const auto first = std::remove_if(free_.begin(), free_.end(), wrong_size);
  for (auto it = first; it != free_.end(); ++it)
    allocated_bytes_ -= ring_bytes((*it)->ring.capacity());
  allocated_ -= static_cast<std::size_t>(free_.end() - first);
  free_.erase(first, free_.end());
  // Spare rings beyond the budget go too, so that the budget holds from the first ring on.
  while (!free_.empty() && allocated_bytes_ > max_bytes_) {
    allocated_bytes_ -= ring_bytes(free_.back()->ring.capacity());
    free_.pop_back();
    --allocated_;
  }
}

void ThreadRegistry::end_session() {
  std::lock_guard<std::mutex> lock(mu_);
  epoch_ = 0;
}

ThreadState* ThreadRegistry::acquire(std::uint32_t epoch, Refusal* why) noexcept {
  const std::int64_t tid = static_cast<std::int64_t>(syscall(SYS_gettid));
  *why = Refusal::kNotCurrent;
  try {
    std::string name = !t_thread_name.empty()    ? t_thread_name
                       : !t_runtime_name.empty() ? t_runtime_name
                                                 : os_thread_name();
    std::unique_lock<std::mutex> lock(mu_);
    if (epoch == 0 || epoch != epoch_) return nullptr;
    std::unique_ptr<ThreadState> ring;
    if (!free_.empty()) {
      ring = std::move(free_.back());
      free_.pop_back();
    } else {
      const std::uint64_t capacity = capacity_;
      const std::uint64_t bytes = ring_bytes(capacity);
      if (allocated_bytes_ + bytes > max_bytes_) {
        *why = Refusal::kNoMemory;
        // Under the lock, so that the collector cannot go away between the read and the call.
        if (pressure_hook_ != nullptr) pressure_hook_(pressure_arg_);
        return nullptr;
      }
      // Reserved before the lock is released, so threads allocating at once stay in budget.
      allocated_bytes_ += bytes;
      ++allocated_;
      // A new ring is allocated and zeroed without the lock: other threads' first events do not
      // wait for it (64 threads starting at once waited 18 ms in the median, behind each other).
      lock.unlock();
      if (void (*hook)() = allocation_hook_.load(std::memory_order_relaxed)) hook();
      try {
        ring = std::make_unique<ThreadState>();
        // Value-initialized, so every page is faulted in here, on the thread's first event,
        // rather than one page fault per 128 records on the recording path.
        ring->slots.reset(new detail::Record[capacity]());
      } catch (...) {
        ring.reset();
      }
      lock.lock();
      if (!ring) {
        allocated_bytes_ -= bytes;
        --allocated_;
        *why = Refusal::kNoMemory;
        return nullptr;
      }
      if (epoch != epoch_ || capacity != capacity_) {
        // The session ended meanwhile: the ring waits for the next thread of a session like it.
        ring->ring.reset(ring->slots.get(), capacity);
        if (capacity == capacity_ && free_.size() < kMaxFreeRings) {
          free_.push_back(std::move(ring));
        } else {
          allocated_bytes_ -= bytes;
          --allocated_;
        }
        return nullptr;
      }
    }
    ring->ring.reset(ring->slots.get(), capacity_);
    ring->epoch.store(epoch, std::memory_order_relaxed);
    ring->depth.store(0, std::memory_order_relaxed);
    ring->released.store(false, std::memory_order_relaxed);
    ring->index = next_index_++;
    ring->os_tid = tid;
    ring->pthread_id = static_cast<std::uint32_t>(pthread_self());
    ring->name = std::move(name);
    ring->name_version.fetch_add(1, std::memory_order_relaxed);
    live_.push_back(ring.get());
    *why = Refusal::kNone;
    return ring.release();
  } catch (...) {
    *why = Refusal::kNoMemory;
    return nullptr;  // out of memory: this thread's events are not recorded
  }
}

void ThreadRegistry::set_pressure_hook(void (*hook)(void*), void* arg) {
  std::lock_guard<std::mutex> lock(mu_);
  pressure_hook_ = hook;
  pressure_arg_ = arg;
}

void ThreadRegistry::release(ThreadState* ring) noexcept {
  ring->released.store(true, std::memory_order_release);
}

void ThreadRegistry::rename(ThreadState* ring, std::string_view name) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    if (ring->name == name) return;
    ring->name.assign(name.data(), name.size());
    ring->name_version.fetch_add(1, std::memory_order_relaxed);
  } catch (...) {
  }
}

void ThreadRegistry::snapshot(std::vector<ThreadState*>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  out->assign(live_.begin(), live_.end());
}

void ThreadRegistry::recycle(ThreadState* ring) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = std::find(live_.begin(), live_.end(), ring);
  if (it == live_.end()) return;
  *it = live_.back();
  live_.pop_back();
  if (free_.size() < kMaxFreeRings && ring->ring.capacity() == capacity_) {
    free_.emplace_back(ring);
  } else {
    allocated_bytes_ -= ring_bytes(ring->ring.capacity());
    delete ring;
    --allocated_;
  }
}

std::uint32_t ThreadRegistry::reserve_index() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_index_++;
}

std::string ThreadRegistry::name_of(const ThreadState* ring) {
  std::lock_guard<std::mutex> lock(mu_);
  return ring->name;
}

std::size_t ThreadRegistry::allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

std::uint64_t ThreadRegistry::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_bytes_;
}

}  // namespace core

namespace detail {

ThreadRing* acquire_ring(std::uint64_t gate) noexcept {
  // A signal handler recording while this thread is getting its ring would wait for the
  // registry's lock its own thread holds: its event is not recorded.
  static __thread bool t_acquiring = false;
  // After a refusal for lack of memory, this thread's events are counted as lost without asking
  // the registry again until a millisecond has passed: one lock per event would make a thread
  // without a ring slower than one with.
  static __thread std::uint32_t t_refused_epoch = 0;
  static __thread std::uint64_t t_retry_at_ns = 0;
  if (core::t_exiting || t_acquiring) return nullptr;
  core::ThreadRegistry& registry = core::ThreadRegistry::get();
  const std::uint32_t epoch = epoch_of(gate);
  if (t_refused_epoch == epoch && monotonic_ns() < t_retry_at_ns) {
    registry.count_lost_without_ring();
    return nullptr;
  }
  t_acquiring = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  core::ThreadRegistry::Refusal why = core::ThreadRegistry::Refusal::kNone;
  core::ThreadState* fresh = registry.acquire(epoch, &why);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_acquiring = false;
  if (fresh == nullptr) {
    if (why == core::ThreadRegistry::Refusal::kNoMemory) {
      registry.count_lost_without_ring();
      t_refused_epoch = epoch;
      t_retry_at_ns = monotonic_ns() + 1000000;
    }
    return nullptr;
  }
  t_refused_epoch = 0;
  static_cast<void>(&core::t_exit_hook);  // registers the exit hook on this thread's first event
  if (t_ring != nullptr) core::ThreadRegistry::release(static_cast<core::ThreadState*>(t_ring));
  t_ring = fresh;
  return fresh;
}

}  // namespace detail

void set_thread_name(std::string_view name) noexcept {
  try {
    core::t_thread_name.assign(name.data(), name.size());
  } catch (...) {
    return;
  }
  // A ring this thread already holds is renamed too; a stale one is left alone, since the
  // collector ignores it.
  if (detail::t_ring != nullptr) {
    core::ThreadRegistry::get().rename(static_cast<core::ThreadState*>(detail::t_ring), name);
  }
}

namespace detail {
void set_runtime_thread_name(std::string_view name) noexcept {
  try {
    core::t_runtime_name.assign(name.data(), name.size());
  } catch (...) {
    return;
  }
  if (core::t_thread_name.empty() && !name.empty() && t_ring != nullptr) {
    core::ThreadRegistry::get().rename(static_cast<core::ThreadState*>(t_ring), name);
  }
}
}  // namespace detail

}  // namespace gpuprobe
