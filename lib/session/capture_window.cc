#include "session/capture_window.h"

#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>

#include "base/output_file.h"
#include "base/utc_time.h"
#include "core/sink_registry.h"

namespace gpuprobe::session {

Status WindowTap::open(const TraceInfo& info) {
  std::lock_guard<std::mutex> lock(mu_);
  info_ = info;
  return {};
}

TraceInfo WindowTap::info() const {
  std::lock_guard<std::mutex> lock(mu_);
  return info_;
}

Status WindowTap::write(const EventBatch& batch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (batch.time != nullptr) {
    time_ = *batch.time;
    have_time_ = true;
  }
  if (!armed_) return {};
  kept_.clear();
  for (const Event& e : batch) {
    if (e.end >= from_ && e.begin < to_) kept_.push_back(e);
  }
  if (kept_.empty()) return {};
  const EventBatch window{kept_.data(), kept_.size(), batch.time, batch.threads};
  for (Output& o : outputs_) {
    if (o.failed) continue;
    Status s;
    try {
      s = o.sink->write(window);
    } catch (...) {
      s = Status::Error("threw an exception");
    }
    if (!s.ok()) {
      o.failed = true;
      o.error = s.message();
    }
  }
  return {};  // a window's failure is its requester's to hear, never the session's
}

Status WindowTap::close(const Stats& stats, const TimeBase& time) {
  std::lock_guard<std::mutex> lock(mu_);
  Status unused;
  close_outputs(stats, time, &unused);
  return {};
}

void WindowTap::arm(std::vector<std::pair<std::string, std::unique_ptr<Sink>>> outputs,
                    std::uint64_t from_tick) {
  std::lock_guard<std::mutex> lock(mu_);
  outputs_.clear();
  for (auto& [label, sink] : outputs) outputs_.push_back(Output{label, std::move(sink), false, {}});
  from_ = from_tick;
  to_ = ~std::uint64_t{0};
  armed_ = true;
}

void WindowTap::end_at(std::uint64_t to_tick) {
  std::lock_guard<std::mutex> lock(mu_);
  to_ = to_tick;
}

Status WindowTap::finish(const Stats& stats) {
  std::lock_guard<std::mutex> lock(mu_);
  Status first;
  close_outputs(stats, time_, &first);
  return first;
}

void WindowTap::close_outputs(const Stats& stats, const TimeBase& time, Status* first_error) {
  if (!armed_) return;
  armed_ = false;
  const TimeBase& base = have_time_ ? time_ : time;
  for (Output& o : outputs_) {
    Status s = o.failed ? Status::Error(o.error) : Status();
    if (!o.failed) {
      try {
        s = o.sink->close(stats, base);
      } catch (...) {
        s = Status::Error("threw an exception");
      }
    }
    if (!s.ok() && first_error->ok()) *first_error = Status::Error(o.label + ": " + s.message());
  }
  outputs_.clear();
}

WindowControl::WindowControl(std::shared_ptr<WindowTap> tap, WindowHooks hooks)
    : tap_(std::move(tap)), hooks_(std::move(hooks)) {}

WindowControl::~WindowControl() { stop(); }

namespace {

// "chrome=/a.json,perfetto=/b.pftrace" as opened outputs; an error names the one refused.
Status open_outputs(const std::string& text, const TraceInfo& info,
                    std::vector<std::pair<std::string, std::unique_ptr<Sink>>>* out,
                    std::string* paths) {
  std::string_view rest = text;
  const core::SinkRegistry& registry = core::SinkRegistry::get();
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    const std::string key(item.substr(0, eq));
    const std::string value = eq == std::string_view::npos
                                  ? std::string()
                                  : base::expand_path(std::string(item.substr(eq + 1)));
    if (!registry.contains(key) || !registry.writes_trace(key)) {
      return Status::Error("'" + key + "' is not a trace output (a window writes chrome=PATH, " +
                           "perfetto=PATH and the like)");
    }
    if (value.empty()) return Status::Error("output " + key + " needs a path");
    std::unique_ptr<Sink> sink;
    if (Status s = registry.create(key, value, &sink); !s.ok()) return s;
    if (Status s = sink->open(info); !s.ok())
      return Status::Error(key + "=" + value + ": " + s.message());
    *paths += (paths->empty() ? "" : ",") + value;
    out->emplace_back(key + "=" + value, std::move(sink));
  }
  if (out->empty()) return Status::Error("a window needs an output (chrome=PATH)");
  return {};
}

}  // namespace

Status WindowControl::begin(const WindowRequest& request,
                            const std::function<void(const std::string& paths)>& started,
                            WindowDone done, bool* busy) {
  if (busy != nullptr) *busy = false;
  if (!(request.seconds > 0 && request.seconds <= kMaxWindowSeconds)) {
    return Status::Error("a window lasts more than 0 and at most 600 seconds");
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return Status::Error("the session is stopping");
  if (busy_) {
    if (busy != nullptr) *busy = true;
    return Status::Error("a window is being recorded already; one at a time (try again after it)");
  }
  if (thread_.joinable()) thread_.join();  // the last window's, done already
  std::vector<std::pair<std::string, std::unique_ptr<Sink>>> outputs;
  std::string paths;
  TraceInfo info = tap_->info();
  info.config +=
      (info.config.empty() ? "" : " ") + std::string("(window: ") + request.outputs + ")";
  if (Status s = open_outputs(request.outputs, info, &outputs, &paths); !s.ok()) return s;
  const std::uint64_t from = hooks_.now();
  tap_->arm(std::move(outputs), from);
  if (hooks_.gpu_until) {
    const double ticks = request.seconds * 1e9 / (hooks_.ns_per_tick > 0 ? hooks_.ns_per_tick : 1);
    hooks_.gpu_until(from + static_cast<std::uint64_t>(ticks) + 1);
  }
  busy_ = true;
  if (started) started(paths);
  // The window's thread blocks every signal, as the collector does: the program's handlers run
  // on the program's threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    thread_ = std::thread([this, seconds = request.seconds, paths, done = std::move(done)] {
      pthread_setname_np(pthread_self(), "gpuprobe-window");
      run(seconds, paths, done);
    });
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    busy_ = false;
    tap_->end_at(hooks_.now());
    static_cast<void>(tap_->finish(Stats{}));
    return Status::Error("cannot start the window's thread");
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return {};
}

void WindowControl::run(double seconds, const std::string& paths, WindowDone done) {
  bool cut_short = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cut_short =
        wake_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping_; });
  }
  tap_->end_at(hooks_.now());
  Status s;
  try {
    hooks_.drain();
    s = tap_->finish(hooks_.stats());
  } catch (...) {
    s = Status::Error("the window could not be written");
  }
  if (s.ok() && cut_short)
    s = Status::Error("the session stopped; the window was cut short: " + paths);
  try {
    if (done) done(s, paths);
  } catch (...) {
  }
  std::lock_guard<std::mutex> lock(mu_);
  busy_ = false;
}

void WindowControl::stop() noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WindowControl::forget() noexcept {
  // The thread object of a thread that is not in this process must never be joined or destroyed.
  new std::thread(std::move(thread_));
}

namespace {
std::mutex g_mu;
// Allocated once and never freed: a request may come while the process exits.
std::shared_ptr<WindowControl>* g_active = nullptr;

std::shared_ptr<WindowControl> active() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_active != nullptr ? *g_active : nullptr;
}
}  // namespace

void set_active_windows(std::shared_ptr<WindowControl> control) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_active == nullptr) g_active = new std::shared_ptr<WindowControl>();
  *g_active = std::move(control);
}

Status request_window(const WindowRequest& request,
                      const std::function<void(const std::string& paths)>& started, WindowDone done,
                      bool* busy) {
  if (busy != nullptr) *busy = false;
  const std::shared_ptr<WindowControl> control = active();
  if (!control) return Status::Error("no gpuprobe session is recording in this process");
  return control->begin(request, started, std::move(done), busy);
}

bool parse_window_seconds(std::string_view text, double* seconds, std::string* why) {
  const std::string s(text);
  // from_chars: the C locale's decimal point whatever the host program's LC_NUMERIC.
  double v = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || error != std::errc() || end != s.data() + s.size() || !std::isfinite(v) ||
      v <= 0 || v > kMaxWindowSeconds) {
    *why = "seconds '" + s.substr(0, 40) +
           "': expected a number of seconds, more than 0 and at most 600";
    return false;
  }
  *seconds = v;
  return true;
}

std::function<metrics::CaptureReply(std::string_view seconds)> capture_hook() {
  // When the windows of the last hour began (at most kMaxHttpWindowsPerHour of them).
  struct Started {
    std::mutex mu;
    std::deque<std::chrono::steady_clock::time_point> times;
  };
  auto started = std::make_shared<Started>();
  return [started](std::string_view text) {
    metrics::CaptureReply reply;
    WindowRequest request;
    std::string why;
    if (!parse_window_seconds(text, &request.seconds, &why)) {
      reply.http_status = 400;
      reply.body = why + "\n";
      return reply;
    }
    std::lock_guard<std::mutex> lock(started->mu);  // one request at a time past here
    const auto now_steady = std::chrono::steady_clock::now();
    auto& times = started->times;
    while (!times.empty() && now_steady - times.front() >= std::chrono::hours(1)) times.pop_front();
    if (times.size() >= static_cast<std::size_t>(kMaxHttpWindowsPerHour)) {
      const auto wait = std::chrono::ceil<std::chrono::seconds>(times.front() +
                                                                std::chrono::hours(1) - now_steady);
      reply.http_status = 429;
      reply.body = "at most " + std::to_string(kMaxHttpWindowsPerHour) +
                   " windows an hour through POST /capture; the next in " +
                   std::to_string(wait.count()) + " s (gpuprobe capture PID has no such limit)\n";
      return reply;
    }
    std::error_code ec;
    const std::filesystem::path cwd = std::filesystem::current_path(ec);
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    const std::string name =
        "gpuprobe_capture_" +
        base::utc_time(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
                       base::UtcStyle::kBasic) +
        "_" + base::host_name() + "_pid" + std::to_string(getpid()) + ".json";
    request.outputs = "chrome=" + (ec ? name : (cwd / name).string());
    bool busy = false;
    std::string paths;
    const Status s = request_window(
        request, [&paths](const std::string& p) { paths = p; }, nullptr, &busy);
    reply.http_status = s.ok() ? 202 : busy ? 409 : 503;
    reply.body = (s.ok() ? paths : s.message()) + "\n";
    if (s.ok()) times.push_back(now_steady);
    return reply;
  };
}

void forget_windows_in_child() noexcept {
  if (g_active != nullptr && *g_active) {
    (*g_active)->forget();
    new std::shared_ptr<WindowControl>(std::move(*g_active));
  }
}

}  // namespace gpuprobe::session
