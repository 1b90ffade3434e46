#include "flight/flight_recorder.h"

#include <pthread.h>

#include <csignal>
#include <cstring>
#include <filesystem>

#include "base/notice.h"
#include "base/output_file.h"
#include "base/printable_text.h"
#include "flight/dump_directory.h"

namespace gpuprobe::flight {
namespace {

// The signal trigger: the handler only sets this, the dump thread looks at it every 50 ms.
std::atomic<bool> g_signal_seen{false};
extern "C" void on_dump_signal(int) { g_signal_seen.store(true, std::memory_order_relaxed); }

// A dump's thread waits this long after the window's end before it writes, so that the
// collector has drained the last events of the window (it drains every flush_ms; CUPTI hands
// GPU records over as its buffers fill or are flushed).
constexpr std::int64_t kDrainMarginNs = 500'000'000;

constexpr std::int64_t kRefusedNoticePeriodNs = 60'000'000'000;

std::uint64_t ticks_of(std::int64_t ns, const TimeBase& time) {
  return static_cast<std::uint64_t>(static_cast<double>(ns) / time.ns_per_tick());
}

}  // namespace

FlightRecorder::FlightRecorder(FlightOptions options, core::ClockSource clock, const TimeBase& time)
    : options_(std::move(options)),
      clock_(clock),
      range_triggers_(options_.triggers),
      store_(options_.mb << 20),
      time_(time) {
  for (const TriggerSpec& t : options_.triggers) {
    if (t.kind == TriggerSpec::Kind::kSignal) signal_ = t.signal;
  }
}

FlightRecorder::~FlightRecorder() {
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    stopping_ = true;
  }
  jobs_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FlightRecorder::set_stats_source(std::function<Stats()> source) {
  std::lock_guard<std::mutex> lock(store_mu_);
  stats_source_ = std::move(source);
}

void FlightRecorder::set_window_hook(std::function<void(std::uint64_t)> hook) {
  std::lock_guard<std::mutex> lock(jobs_mu_);
  window_hook_ = std::move(hook);
}

Status FlightRecorder::open(const TraceInfo& info) {
  info_ = info;
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  if (ec) return Status::Error("dump=" + options_.dir + ": cannot create it: " + ec.message());
  if (signal_ != 0) {
    struct sigaction old {};
    sigaction(signal_, nullptr, &old);
    // Only a signal nobody handles: the program's own handler is never replaced.
    if (old.sa_handler == SIG_DFL && (old.sa_flags & SA_SIGINFO) == 0) {
      struct sigaction sa {};
      sa.sa_handler = &on_dump_signal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      sigaction(signal_, &sa, nullptr);
    } else {
      base::print_notice(std::string("trigger=signal: ") + strsignal(signal_) +
                         " already has a handler in this program; the signal trigger is off");
      signal_ = 0;
    }
  }
  g_signal_seen.store(false, std::memory_order_relaxed);
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "gpuprobe-dump");
    run();
  });
  base::print_notice("flight recorder: the last " + std::to_string(options_.seconds) +
                     " s in at most " + std::to_string(options_.mb) + " MiB; dumps go to " +
                     std::filesystem::absolute(options_.dir, ec).string());
  return {};
}

Status FlightRecorder::write(const EventBatch& batch) {
  fired_.clear();
  range_triggers_.observe(batch, &fired_);
  std::uint64_t pinned = ~std::uint64_t{0};  // the earliest start a queued dump still needs
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    for (const DumpJob& job : jobs_) pinned = std::min(pinned, job.from_tick);
  }
  {
    std::lock_guard<std::mutex> lock(store_mu_);
    if (batch.time != nullptr) time_ = *batch.time;
    for (const Event& e : batch) {
      store_.append(e);
      if (is_gpu_recording_switch(e)) {
        gpu_switches_.push_back(core::RecordingSwitch{e.begin, e.value != 0});
        gpu_switch_row_ = e.thread;
      }
    }
    const std::uint64_t window = ticks_of(std::int64_t{options_.seconds} * 1'000'000'000, time_);
    const std::uint64_t latest = store_.latest_tick();
    const std::uint64_t oldest = std::min(latest > window ? latest - window : 0, pinned);
    store_.evict(oldest);
    // The last switch before the window says whether its start was recorded: it stays.
    std::size_t before = 0;
    while (before + 1 < gpu_switches_.size() && gpu_switches_[before + 1].tick <= oldest) ++before;
    gpu_switches_.erase(gpu_switches_.begin(), gpu_switches_.begin() + before);
  }
  for (Firing& f : fired_) {
    DumpJob job;
    job.source = "trigger";
    job.reason = std::move(f.reason);
    job.trigger = f.spec->text;
    job.values = std::move(f.values);
    job.at_tick = f.at_tick;
    job.thread = f.thread;
    std::string why;  // said by enqueue() once per limit; the metrics count every time
    std::string path;
    static_cast<void>(enqueue(std::move(job), true, &why, &path));
  }
  return {};
}

// A refused trigger is said at most once a minute, with how many were refused since the last
// line: a trigger that keeps firing (a signal sent in a loop, a request that is always slow)
// neither fills the host's stderr nor goes unsaid. The metrics count every one.
void FlightRecorder::say_refused(std::int64_t now, const DumpJob& job, const std::string& why) {
  if (refused_said_ns_ != 0 && now - refused_said_ns_ < kRefusedNoticePeriodNs) {
    ++refused_unsaid_;
    return;
  }
  std::string line = "trigger " + job.trigger + " fired (" + job.reason + "), no dump: " + why;
  if (refused_unsaid_ > 0) {
    line += "; " + std::to_string(refused_unsaid_) + " more refused since the last such line";
  }
  base::print_notice(
      line + " (counted in gpuprobe_triggers_suppressed_total; said at most once a minute)");
  refused_said_ns_ = now;
  refused_unsaid_ = 0;
}

bool FlightRecorder::enqueue(DumpJob job, bool triggered, std::string* why, std::string* path) {
  std::unique_lock<std::mutex> lock(jobs_mu_);
  if (triggered) ++counters_.triggers_fired;
  if (stopping_) {
    *why = "the session is stopping";
    return false;
  }
  TimeBase time;  // one copy for every conversion below
  {
    std::lock_guard<std::mutex> store_lock(store_mu_);
    time = time_;
  }
  const std::int64_t now = time.wall_ns(core::read_ticks(clock_));
  while (!dumps_this_hour_.empty() && dumps_this_hour_.front() < now - 3'600'000'000'000) {
    dumps_this_hour_.pop_front();
  }
  for (const DumpJob& queued : jobs_) {
    if (job.at_tick >= queued.from_tick && job.at_tick <= queued.to_tick) {
      // The queued dump covers this moment already.
      if (triggered) {
        ++counters_.suppressed_pending;
        *why = "a dump that covers it is in progress";
        say_refused(now, job, *why);
        return false;
      }
      *path = (std::filesystem::path(options_.dir) / queued.name).string();
      return true;
    }
  }
  if (triggered && last_triggered_ns_ != 0 && now - last_triggered_ns_ < options_.cooldown_ns) {
    ++counters_.suppressed_cooldown;
    *why = "within dump_cooldown of the last triggered dump";
    say_refused(now, job, *why);
    return false;
  }
  if (dumps_this_hour_.size() >= options_.max_per_hour) {
    ++counters_.suppressed_hourly;
    *why = "dump_max_per_hour=" + std::to_string(options_.max_per_hour) + " reached";
    if (triggered) say_refused(now, job, *why);
    return false;
  }
  dumps_this_hour_.push_back(now);
  if (triggered) last_triggered_ns_ = now;
  const std::uint64_t before = ticks_of(std::int64_t{options_.seconds} * 1'000'000'000, time);
  job.from_tick = job.at_tick > before ? job.at_tick - before : 0;
  job.to_tick = job.at_tick + ticks_of(options_.after_ns, time);
  job.name = dump_name(time.wall_ns(job.at_tick), base::host_name(), info_.pid, info_.rank);
  *path = (std::filesystem::path(options_.dir) / job.name).string();
  // Under the lock: no dump is queued after close(), so the hook never outlives the session.
  if (window_hook_) window_hook_(job.to_tick);
  jobs_.push_back(std::move(job));
  lock.unlock();
  jobs_cv_.notify_all();
  return true;
}

Status FlightRecorder::request(std::string_view source, std::string_view reason,
                               std::string* path) {
  DumpJob job;
  job.source = std::string(source);
  // Printable text of a line's length: it reaches stderr, dump.json and the report's output.
  job.reason =
      reason.empty() ? std::string(source) + " request" : base::printable_text(reason, 200);
  job.at_tick = core::read_ticks(clock_);
  std::string why;
  if (!enqueue(std::move(job), false, &why, path)) return Status::Error("no dump: " + why);
  return {};
}

void FlightRecorder::run() {
  std::unique_lock<std::mutex> lock(jobs_mu_);
  for (;;) {
    if (signal_ != 0 && g_signal_seen.exchange(false, std::memory_order_relaxed)) {
      lock.unlock();
      DumpJob job;
      job.source = "signal";
      job.reason = std::string("received ") + strsignal(signal_);
      job.trigger = "signal";
      job.at_tick = core::read_ticks(clock_);
      // A trigger like the others: cooldown, hourly maximum and counters apply (the handler
      // only raised a flag, so signals sent faster than it is looked at count as one).
      std::string why;
      std::string path;
      static_cast<void>(enqueue(std::move(job), true, &why, &path));
      lock.lock();
    }
    if (!jobs_.empty()) {
      TimeBase time;
      {
        std::lock_guard<std::mutex> store_lock(store_mu_);
        time = time_;
      }
      const std::int64_t now = time.wall_ns(core::read_ticks(clock_));
      if (stopping_ || now >= time.wall_ns(jobs_.front().to_tick) + kDrainMarginNs) {
        DumpJob job = jobs_.front();
        lock.unlock();
        write_job(std::move(job));
        lock.lock();
        jobs_.pop_front();  // only now: until written, its window stays pinned in the store
        continue;
      }
    }
    if (stopping_ && jobs_.empty()) return;
    // A new job and the stop notify. A queued dump waits for the end of its time after (and a
    // drain past it); a signal trigger's flag, set by a handler that cannot notify, is looked
    // at every 50 ms. With neither, the thread sleeps until there is work: an always-on
    // session's idle recorder does not wake 20 times a second.
    if (signal_ != 0 || !jobs_.empty()) {
      jobs_cv_.wait_for(lock, std::chrono::milliseconds(50));
    } else {
      jobs_cv_.wait(lock);
    }
  }
}

void FlightRecorder::write_job(DumpJob job) {
  StoreSnapshot snapshot;
  DumpContext context;
  std::function<Stats()> stats_source;
  {
    std::lock_guard<std::mutex> lock(store_mu_);
    snapshot = store_.snapshot();
    context.time = time_;
    context.store = store_.counters();
    context.gpu_switches = gpu_switches_;
    context.gpu_switch_row = gpu_switch_row_;
    if (closed_) {
      context.session = final_stats_;
      job.after_cut_short = store_.latest_tick() < job.to_tick;
    } else {
      stats_source = stats_source_;
    }
  }
  if (stats_source) context.session = stats_source();
  context.info = info_;
  context.options = &options_;
  std::string path;
  const Status s = write_dump(job, snapshot, context, &path);
  int deleted = 0;
  if (s.ok()) {
    deleted = enforce_disk_cap(options_.dir, options_.max_mb << 20,
                               std::filesystem::path(path).filename().string(), nullptr);
    base::print_notice("dump written: " + path + " (" + job.reason + ")");
  } else {
    base::print_notice(s.message());
  }
  std::lock_guard<std::mutex> lock(jobs_mu_);
  ++(s.ok() ? counters_.dumps_written : counters_.dumps_failed);
  counters_.dumps_deleted += static_cast<std::uint64_t>(deleted);
}

Status FlightRecorder::close(const Stats& stats, const TimeBase& time) {
  {
    std::lock_guard<std::mutex> lock(store_mu_);
    time_ = time;
    final_stats_ = stats;
    closed_ = true;
  }
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    stopping_ = true;
  }
  jobs_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard<std::mutex> lock(store_mu_);
    store_.clear();  // its figures may be read until the next session: not its memory
  }
  if (signal_ != 0) {
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(signal_, &sa, nullptr);
  }
  return {};
}

FlightCounters FlightRecorder::counters() const {
  FlightCounters c;
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    c = counters_;
  }
  std::lock_guard<std::mutex> lock(store_mu_);
  c.store = store_.counters();
  return c;
}

}  // namespace gpuprobe::flight
