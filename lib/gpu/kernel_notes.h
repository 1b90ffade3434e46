// Launches made through gpuprobe::launch(): a process-wide queue from the launching threads to
// the collector, and the collector's side, which either gives CUPTI's kernel records the launch's
// declared cost or, without CUPTI, turns the launch's CUDA events into kernel records.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "gpuprobe/detail/kernel_note.hpp"
#include "gpuprobe/gpu_activity.hpp"

namespace gpuprobe::gpu {

class KernelNoteQueue {
 public:
  static KernelNoteQueue& get();

  // A session starts (`cupti`: it records CUPTI activity) or ends. Ending destroys the session's
  // anchor events and any notes left.
  void begin_session(bool cupti);
  void end_session();
  bool cupti_recording() const;

  bool push(const detail::KernelNote& note);
  void take(std::vector<detail::KernelNote>* out);
  void* anchor(std::uint32_t device, void* (*record_and_sync)(std::uint64_t, std::uint64_t*),
               const detail::CudaEventOps* ops, std::uint64_t* ticks);
  // Notes refused because the queue was full, this session.
  std::uint64_t overflowed() const;

 private:
  struct Anchor {
    void* event;
    std::uint64_t ticks;
    const detail::CudaEventOps* ops;
    std::chrono::steady_clock::time_point made;
  };
  static void destroy_events(const detail::KernelNote& note);

  mutable std::mutex mu_;
  bool active_ = false;
  bool cupti_ = false;
  std::vector<detail::KernelNote> notes_;
  std::unordered_map<std::uint32_t, Anchor> anchors_;  // the current one per device
  std::vector<Anchor> retired_;
  std::uint64_t overflowed_ = 0;
};

class KernelNoteTracker {
 public:
  // `ns_per_tick` converts CUDA-event milliseconds to ticks; notes older than `horizon_ticks`
  // are forgotten.
  KernelNoteTracker(double ns_per_tick, std::uint64_t horizon_ticks)
      : ns_per_tick_(ns_per_tick), horizon_(horizon_ticks) {}

  // Takes the queued notes.
  void collect();
  // With CUPTI: the launch call a note covers is found by thread and time; the kernels of that
  // call get the note's declared cost. Looks at (*activities)[first...].
  void annotate(std::vector<GpuActivity>* activities, std::size_t first, std::uint64_t now);
  // Without CUPTI: kernel records from the notes whose CUDA events completed; at `final`, the
  // rest are given up and counted.
  void timed(bool final, std::vector<GpuActivity>* out);
  std::uint64_t untimed() const { return untimed_; }

 private:
  struct Cost {
    double bytes;
    double flops;
    std::uint64_t launched;  // ticks, for forgetting
  };
  std::vector<detail::KernelNote> notes_;
  std::unordered_map<std::uint32_t, Cost> by_correlation_;
  double ns_per_tick_;
  std::uint64_t horizon_;
  std::uint64_t untimed_ = 0;
};

}  // namespace gpuprobe::gpu
