// On-demand windows: a running session asked, by `gpuprobe capture PID` (control_server.h) or
// POST /capture on the metrics port, to write what it records for the next SECONDS to outputs of
// its own (trace sinks of the registry: chrome=PATH by default), while it goes on as it was.
//
// A session that can take windows has a WindowTap among its sinks: it passes nothing on until a
// window is armed, then every event that overlaps the window (it ends at or after the start and
// begins before the end) to the window's outputs. A WindowControl runs one window at a time on a
// thread of its own ("gpuprobe-window"): it sleeps out the window, then has the collector drain
// the rings, so everything that ended in time is in, and closes the outputs. Where the session
// samples GPU activity in bursts (gpu_burst=), the window asks for it to be recorded throughout
// (from the collector's next drain on); CUPTI is not started for a window where the session has
// none. A second request
// meanwhile is told "busy"; a flight dump may overlap a window (they share nothing). A session
// that stops cuts its window short: what was recorded is written, and the requester told so.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gpuprobe/sink.hpp"
#include "metrics/flight_metrics.h"

namespace gpuprobe::session {

// The longest window that may be asked for, in seconds.
inline constexpr double kMaxWindowSeconds = 600;

// The most windows POST /capture starts in any hour (the control socket has no such limit: it
// answers only its own user). Anyone on the host can reach the metrics port, and each window is
// a file in the process's working directory; past it the request gets 429.
inline constexpr int kMaxHttpWindowsPerHour = 20;

// What a window is asked to write, and for how long.
struct WindowRequest {
  double seconds = 10;  // (0, kMaxWindowSeconds]
  std::string outputs;  // trace outputs in config syntax: "chrome=/abs/w.json,perfetto=/abs/w.pb"
};

// Told once a window's outputs are closed: ok and the files (comma-separated), or the error.
using WindowDone = std::function<void(const Status& status, const std::string& paths)>;

// The session's sink that feeds an armed window (see above).
class WindowTap : public Sink {
 public:
  Status open(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  Status close(const Stats& stats, const TimeBase& time) override;

  // The session's TraceInfo, as open() got it.
  TraceInfo info() const;
  // Starts feeding `outputs` (opened) with the events from `from_tick` on.
  void arm(std::vector<std::pair<std::string, std::unique_ptr<Sink>>> outputs,
           std::uint64_t from_tick);
  // Ends the window at `to_tick`: later events are not passed on.
  void end_at(std::uint64_t to_tick);
  // Closes the window's outputs with `stats`; the first error, if any.
  Status finish(const Stats& stats);

 private:
  void close_outputs(const Stats& stats, const TimeBase& time, Status* first_error);

  mutable std::mutex mu_;
  TraceInfo info_;
  bool armed_ = false;
  std::uint64_t from_ = 0;
  std::uint64_t to_ = ~std::uint64_t{0};
  bool have_time_ = false;
  TimeBase time_;  // of the last batch: what the outputs are closed with
  struct Output {
    std::string label;
    std::unique_ptr<Sink> sink;
    bool failed = false;
    std::string error;
  };
  std::vector<Output> outputs_;
  std::vector<Event> kept_;  // the batch's events inside the window, reused
};

// What the session hands its WindowControl (all of it valid until WindowControl::stop()).
struct WindowHooks {
  std::function<std::uint64_t()> now;  // the session's clock, in ticks
  std::function<void()> drain;         // one drain of the rings into the sinks
  std::function<Stats()> stats;        // the session's statistics now
  // GPU activity sampled in bursts (gpu_burst=): recorded until this tick at least, so that the
  // window has the GPU work of its whole time. None: GPU recording is left as it is.
  std::function<void(std::uint64_t until_tick)> gpu_until;
  double ns_per_tick = 1;  // of the session's clock, for the window's end in ticks
};

// The one window at a time of a session (see above).
class WindowControl {
 public:
  WindowControl(std::shared_ptr<WindowTap> tap, WindowHooks hooks);
  ~WindowControl();  // stop()
  WindowControl(const WindowControl&) = delete;
  WindowControl& operator=(const WindowControl&) = delete;

  // Opens the outputs and starts the window; `started` is told the files before anything can
  // end it, `done` once it is written (on the window's thread). `*busy` (may be null) is set
  // when a window runs already.
  [[nodiscard]] Status begin(const WindowRequest& request,
                             const std::function<void(const std::string& paths)>& started,
                             WindowDone done, bool* busy);
  // Refuses new windows, cuts the running one short (it is written) and joins its thread.
  void stop() noexcept;
  // fork()'s child: the window's thread does not exist here; nothing is joined or written.
  void forget() noexcept;

 private:
  void run(double seconds, const std::string& paths, WindowDone done);

  std::shared_ptr<WindowTap> tap_;
  WindowHooks hooks_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

// The running session's WindowControl (nullptr: none); set at start, cleared at stop.
void set_active_windows(std::shared_ptr<WindowControl> control);

// Asks the running session for a window (WindowControl::begin); an error when none runs.
[[nodiscard]] Status request_window(const WindowRequest& request,
                                    const std::function<void(const std::string& paths)>& started,
                                    WindowDone done, bool* busy);

// "SECONDS" as a window's length; false (and a message in `*why`) when it is not a number in
// (0, kMaxWindowSeconds].
bool parse_window_seconds(std::string_view text, double* seconds, std::string* why);

// POST /capture?seconds=N for the metrics outputs: starts a window written to
// gpuprobe_capture_<UTC>_<host>_pid<PID>.json in the process's working directory, at most
// kMaxHttpWindowsPerHour an hour (the hook's own count).
std::function<metrics::CaptureReply(std::string_view seconds)> capture_hook();

// fork()'s child: the parent's WindowControl is forgotten, not stopped.
void forget_windows_in_child() noexcept;

}  // namespace gpuprobe::session
