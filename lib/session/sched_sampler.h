// sched=PERIOD: the kernel's scheduler statistics of every thread of the process
// (nanoseconds on a CPU from its CPU-time clock, nanoseconds runnable but waiting for one from
// /proc/self/task/TID/schedstat)
// sampled every PERIOD on a thread of its own, and recorded as counters named
// "sched running ns (tid N)" and "sched waiting ns (tid N)" (formats/sched_counters.h), each
// stamped with the time it was read and recorded only when it changed (and every thread's once
// more when sampling stops), so that the report can split any span of a thread into running,
// waiting for a CPU (preempted, run-queue delay) and blocked (a lock, I/O, sleep). The names
// carry the thread because counter tracks are per process in Perfetto. The kernel adds a
// thread's run-queue delay when it gets a CPU back, so a wait shows up after the fact; the
// report places it back (analysis/sched_series.h).
//
// Cost: one pread of an open file and one clock read per thread per period (0.6–0.9 µs the pair
// in a microbenchmark); threads are listed again every 10 periods (a new thread is sampled from
// then on), at most kMaxThreads. Measured whole on the 2-core development VM: 2.5–4.9 % of a
// core at sched=1ms with 9–13 threads (bench/RESULTS.md, issue 47).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace gpuprobe::session {

class SchedSampler {
 public:
  static constexpr int kMaxThreads = 512;        // followed at once
  static constexpr int kMaxNamedThreads = 4096;  // followed in a session, one after another

  // Starts sampling; the session's gate must be open (the counters are recorded events).
  explicit SchedSampler(std::int64_t period_ns);
  // Stops and joins: the last samples are recorded before it returns.
  ~SchedSampler();
  SchedSampler(const SchedSampler&) = delete;
  SchedSampler& operator=(const SchedSampler&) = delete;

  // In a forked child: the thread does not exist there; nothing is joined.
  void forget() noexcept { thread_.detach(); }

 private:
  void run();
  const std::int64_t period_ns_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuprobe::session
