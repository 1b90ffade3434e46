#include "session/sched_sampler.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "formats/sched_counters.h"
#include "gpuprobe/range.hpp"

namespace gpuprobe::session {
namespace {

namespace sc = formats::sched_counters;

struct Watched {
  int fd = -1;
  std::uint64_t running = ~0ull, waiting = ~0ull;  // as last recorded
  const CallSite* running_site = nullptr;
  const CallSite* waiting_site = nullptr;
  bool seen = false;          // in the latest listing
  bool stale = false;         // unchanged at the latest sampling, so not recorded then
  std::uint64_t read_at = 0;  // the ticks of its latest read
};

// Another thread's CPU-time clock (the kernel's encoding of a thread's clock id: its tid, the
// per-thread bit and the scheduler's clock), readable by any thread of its process.
clockid_t thread_cpu_clock(long tid) {
  return static_cast<clockid_t>((~static_cast<unsigned long>(tid) << 3) | 4 | 2);
}

// A counter's total at `ticks` (doubles hold them exactly: below 2^53 ns, 104 days on a CPU).
void record(std::uint64_t gate, const CallSite* site, std::uint64_t ticks, std::uint64_t total) {
  const double value = static_cast<double>(total);
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  detail::emit(gate, detail::RecordKind::kCounter, site, ticks, bits);
}

// The process's threads now, opened (or kept) in `watched`; gone ones closed.
void list_threads(std::map<long, Watched>* watched, long self, int* named) {
  for (auto& [tid, w] : *watched) w.seen = false;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir)) {
      const long tid = std::strtol(entry->d_name, nullptr, 10);
      if (tid <= 0 || tid == self) continue;
      auto it = watched->find(tid);
      if (it == watched->end()) {
        // Each thread takes two names of the session's table: a program that makes threads
        // without end stops being followed after kMaxNamedThreads, not the table filled.
        if (watched->size() >= static_cast<std::size_t>(SchedSampler::kMaxThreads) ||
            *named >= SchedSampler::kMaxNamedThreads)
          continue;
        const std::string path = "/proc/self/task/" + std::to_string(tid) + "/schedstat";
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        Watched w;
        w.fd = fd;
        w.running_site = detail::intern(sc::name(sc::kRunning, tid), Category::kApp);
        w.waiting_site = detail::intern(sc::name(sc::kWaiting, tid), Category::kApp);
        ++*named;
        it = watched->emplace(tid, w).first;
      }
      it->second.seen = true;
    }
    closedir(dir);
  }
  for (auto it = watched->begin(); it != watched->end();) {
    if (it->second.seen) {
      ++it;
    } else {
      close(it->second.fd);
      it = watched->erase(it);
    }
  }
}

// One sampling of every watched thread. Each thread's totals are stamped with the time they were
// read (not one time for all: reading hundreds of threads takes a while). A thread's totals are
// recorded only when they changed — or, with `every_thread`, always. A thread unchanged since its
// last recording gets its old totals again at its previous read, so that what it did since lies
// within one period, not spread over the whole quiet stretch.
void sample(std::map<long, Watched>* watched, bool every_thread) {
  const std::uint64_t gate = detail::gate_for(Category::kApp);
  for (auto& [tid, w] : *watched) {
    // schedstat's time on a CPU is as of the scheduler's last accounting (up to a tick old
    // for a thread running now); the thread's CPU clock adds what it has run since. The clock
    // is read first: a thread that gets a CPU back between the two reads (this thread may wait
    // for one in between) then has its wait in the sample and not yet its run — the other order
    // gave a run with no wait before it, and the report put the wait after the run.
    timespec cpu{};
    const bool clocked = clock_gettime(thread_cpu_clock(tid), &cpu) == 0;
    char text[96];
    const ssize_t n = pread(w.fd, text, sizeof text - 1, 0);
    if (n <= 0) continue;  // the thread ended: the next listing closes it
    text[n] = '\0';
    char* end = nullptr;
    std::uint64_t running = std::strtoull(text, &end, 10);
    const std::uint64_t waiting = std::strtoull(end, nullptr, 10);
    if (clocked)
      running = static_cast<std::uint64_t>(cpu.tv_sec) * 1'000'000'000u +
                static_cast<std::uint64_t>(cpu.tv_nsec);
    const std::uint64_t now = gate != 0 ? detail::now_ticks(gate) : 0;
    const bool changed = running != w.running || waiting != w.waiting;
    if (gate != 0 && (changed || every_thread)) {
      if (w.stale && w.read_at != 0) {
        record(gate, w.running_site, w.read_at, w.running);
        record(gate, w.waiting_site, w.read_at, w.waiting);
      }
      record(gate, w.running_site, now, running);
      record(gate, w.waiting_site, now, waiting);
      w.running = running;
      w.waiting = waiting;
      w.stale = false;
    } else if (!changed) {
      w.stale = true;
    }
    w.read_at = now;
  }
}

}  // namespace

SchedSampler::SchedSampler(std::int64_t period_ns) : period_ns_(period_ns) {
  // Like the collector: every signal blocked, so the program's handlers run on its own threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "gpuprobe-sched");
    run();
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

SchedSampler::~SchedSampler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SchedSampler::run() {
  const long self = static_cast<long>(syscall(SYS_gettid));
  std::map<long, Watched> watched;
  const auto period = std::chrono::nanoseconds(period_ns_);
  int named = 0;  // threads given counter names this session
  std::unique_lock<std::mutex> lock(mu_);
  for (std::uint64_t tick = 0;; ++tick) {
    lock.unlock();
    if (tick % 10 == 0) list_threads(&watched, self, &named);
    sample(&watched, /*every_thread=*/false);
    lock.lock();
    if (wake_.wait_for(lock, period, [this] { return stopping_; })) break;
  }
  lock.unlock();
  // The last sampling records every thread, changed or not: past it the report knows nothing,
  // and before it an unchanged thread was unchanged until the session stopped.
  sample(&watched, /*every_thread=*/true);
  for (auto& [tid, w] : watched) close(w.fd);
}

}  // namespace gpuprobe::session
