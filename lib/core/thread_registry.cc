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

void ThreadRegistry::begin_session(std::uint32_t epoch, std::uint64_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
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
  allocated_ -= static_cast<std::size_t>(free_.end() - first);
  free_.erase(first, free_.end());
}

void ThreadRegistry::end_session() {
  std::lock_guard<std::mutex> lock(mu_);
  epoch_ = 0;
}

ThreadState* ThreadRegistry::acquire(std::uint32_t epoch) noexcept {
  const std::int64_t tid = static_cast<std::int64_t>(syscall(SYS_gettid));
  try {
    std::string name = t_thread_name.empty() ? os_thread_name() : t_thread_name;
    std::unique_lock<std::mutex> lock(mu_);
    if (epoch == 0 || epoch != epoch_) return nullptr;
    std::unique_ptr<ThreadState> ring;
    if (!free_.empty()) {
      ring = std::move(free_.back());
      free_.pop_back();
    } else {
      // A new ring is allocated and zeroed without the lock: other threads' first events do not
      // wait for it (64 threads starting at once waited 18 ms in the median, behind each other).
      const std::uint64_t capacity = capacity_;
      lock.unlock();
      ring = std::make_unique<ThreadState>();
      // Value-initialized, so every page is faulted in here, on the thread's first event,
      // rather than one page fault per 128 records on the recording path.
      ring->slots.reset(new detail::Record[capacity]());
      lock.lock();
      ++allocated_;
      if (epoch != epoch_ || capacity != capacity_) {
        // The session ended meanwhile: the ring waits for the next thread of a session like it.
        ring->ring.reset(ring->slots.get(), capacity);
        if (capacity == capacity_ && free_.size() < kMaxFreeRings) {
          free_.push_back(std::move(ring));
        } else {
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
    return ring.release();
  } catch (...) {
    return nullptr;  // out of memory: this thread's events are not recorded
  }
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
    delete ring;
    --allocated_;
  }
}

std::string ThreadRegistry::name_of(const ThreadState* ring) {
  std::lock_guard<std::mutex> lock(mu_);
  return ring->name;
}

std::size_t ThreadRegistry::allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

}  // namespace core

namespace detail {

ThreadRing* acquire_ring(std::uint64_t gate) noexcept {
  // A signal handler recording while this thread is getting its ring would wait for the
  // registry's lock its own thread holds: its event is not recorded.
  static __thread bool t_acquiring = false;
  if (core::t_exiting || t_acquiring) return nullptr;
  t_acquiring = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  core::ThreadState* fresh = core::ThreadRegistry::get().acquire(epoch_of(gate));
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_acquiring = false;
  if (fresh == nullptr) return nullptr;
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

}  // namespace gpuprobe
