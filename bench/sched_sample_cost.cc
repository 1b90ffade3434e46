// What one scheduler sample of one thread costs the sampler (sched=, lib/session/sched_sampler.h),
// by each way of reading it, with N other threads of the process alive (blocked on a condition
// variable, as most of a program's threads are at any moment):
//
//   SchedstatPread    pread of /proc/self/task/TID/schedstat from a file kept open (run time as of
//                     the scheduler's last accounting, run-queue delay)
//   ThreadCpuClock    clock_gettime on the thread's CPU-time clock (run time up to now)
//   StatPread         pread of /proc/self/task/TID/stat from a file kept open, its state field
//                     (R runnable or running, S/D blocked) found after the command's ')'
//   SampledToday      the first two together: what the sampler reads per thread per period now
//
// Each iteration samples all N threads once; "per_thread" is the time of one thread's sample.
// Run: build/bench/sched_sample_cost [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// N threads that wait on a condition variable until destroyed; their OS ids and open files.
class Sleepers {
 public:
  explicit Sleepers(int n) : tids_(static_cast<std::size_t>(n), 0) {
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this, i] {
        std::unique_lock<std::mutex> lock(mu_);
        tids_[static_cast<std::size_t>(i)] = static_cast<long>(syscall(SYS_gettid));
        ++started_;
        cv_.notify_all();
        cv_.wait(lock, [this] { return stop_; });
      });
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return started_ == n; });
  }
  ~Sleepers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  Sleepers(const Sleepers&) = delete;
  Sleepers& operator=(const Sleepers&) = delete;

  const std::vector<long>& tids() const { return tids_; }

  // Each thread's /proc/self/task/TID/`file`, opened; the caller closes them.
  std::vector<int> open_each(const char* file) const {
    std::vector<int> fds;
    for (long tid : tids_) {
      const std::string path = "/proc/self/task/" + std::to_string(tid) + "/" + file;
      fds.push_back(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    }
    return fds;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int started_ = 0;
  bool stop_ = false;
  std::vector<long> tids_;
  std::vector<std::thread> threads_;
};

// Another thread's CPU-time clock (the kernel's encoding, as the sampler builds it).
clockid_t thread_cpu_clock(long tid) {
  return static_cast<clockid_t>((~static_cast<unsigned long>(tid) << 3) | 4 | 2);
}

void close_all(const std::vector<int>& fds) {
  for (int fd : fds) close(fd);
}

void per_thread(benchmark::State& state, int n) {
  state.counters["per_thread"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}

std::uint64_t read_schedstat(int fd) {
  char text[96];
  const ssize_t n = pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return 0;
  text[n] = '\0';
  char* end = nullptr;
  const std::uint64_t running = std::strtoull(text, &end, 10);
  return running + std::strtoull(end, nullptr, 10);
}

void BM_SchedstatPread(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Sleepers sleepers(n);
  const std::vector<int> fds = sleepers.open_each("schedstat");
  for (auto _ : state) {
    for (int fd : fds) benchmark::DoNotOptimize(read_schedstat(fd));
  }
  close_all(fds);
  per_thread(state, n);
}

void BM_ThreadCpuClock(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Sleepers sleepers(n);
  std::vector<clockid_t> clocks;
  for (long tid : sleepers.tids()) clocks.push_back(thread_cpu_clock(tid));
  for (auto _ : state) {
    for (clockid_t c : clocks) {
      timespec t{};
      benchmark::DoNotOptimize(clock_gettime(c, &t));
      benchmark::DoNotOptimize(t);
    }
  }
  per_thread(state, n);
}

void BM_StatPread(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Sleepers sleepers(n);
  const std::vector<int> fds = sleepers.open_each("stat");
  std::int64_t runnable = 0;
  for (auto _ : state) {
    for (int fd : fds) {
      // "TID (comm) S ...": the command may hold spaces and parentheses; the state follows
      // the last ')'.
      char text[512];
      const ssize_t got = pread(fd, text, sizeof text - 1, 0);
      if (got <= 0) continue;
      text[got] = '\0';
      const char* close_paren = std::strrchr(text, ')');
      if (close_paren != nullptr && close_paren[1] == ' ') runnable += close_paren[2] == 'R';
    }
  }
  benchmark::DoNotOptimize(runnable);
  close_all(fds);
  per_thread(state, n);
}

void BM_SampledToday(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Sleepers sleepers(n);
  const std::vector<int> fds = sleepers.open_each("schedstat");
  std::vector<clockid_t> clocks;
  for (long tid : sleepers.tids()) clocks.push_back(thread_cpu_clock(tid));
  for (auto _ : state) {
    for (std::size_t i = 0; i < fds.size(); ++i) {
      benchmark::DoNotOptimize(read_schedstat(fds[i]));
      timespec t{};
      benchmark::DoNotOptimize(clock_gettime(clocks[i], &t));
      benchmark::DoNotOptimize(t);
    }
  }
  close_all(fds);
  per_thread(state, n);
}

void threads(benchmark::internal::Benchmark* b) {
  for (int n : {1, 8, 64, 512}) b->Arg(n);
  b->ArgName("threads");
}

BENCHMARK(BM_SchedstatPread)->Apply(threads);
BENCHMARK(BM_ThreadCpuClock)->Apply(threads);
BENCHMARK(BM_StatPread)->Apply(threads);
BENCHMARK(BM_SampledToday)->Apply(threads);

}  // namespace

BENCHMARK_MAIN();
