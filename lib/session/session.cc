#include "gpuprobe/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>

#include "base/output_file.h"
#include "core/categories.h"
#include "core/clock.h"
#include "core/collector.h"
#include "core/error_log.h"
#include "core/gpu_source.h"
#include "core/name_table.h"
#include "core/sink_registry.h"
#include "core/steps.h"
#include "core/thread_registry.h"
#include "flight/flight_recorder.h"
#include "gpu/activity_source.h"
#include "gpu/deferred_gpu_source.h"
#include "gpu/kernel_notes.h"
#include "gpu/start_gpu_source.h"
#include "gpuprobe/detail/gate.hpp"
#include "session/builtin_sinks.h"
#include "session/capture_window.h"
#include "session/control_server.h"
#include "session/cuda_injection.h"
#include "session/dump_control.h"
#include "session/fork.h"
#include "session/sched_sampler.h"
#include "session/session_config.h"
#include "session/session_origin.h"

namespace gpuprobe {
namespace detail {

namespace {

// Only one session records at a time: rings, the gate and the name table are process-wide.
std::atomic<bool> g_session_active{false};

// The session recording now, for stop_recording_session(). The mutex is recursive because a
// session's stop() unregisters itself under it while stop_recording_session() holds it.
std::recursive_mutex g_recording_mu;
SessionCore* g_recording = nullptr;

// The epoch of the last session, 1..detail::kMaxEpoch (0 means "no session" in ring
// bookkeeping). Written only by the session that holds g_session_active.
std::uint32_t g_last_epoch = 0;

// The id of the last session that started (RecordingSession::id): never reused, unlike epochs.
std::uint64_t g_last_id = 0;

// Set while the GPUPROBE variable's session starts (environment_session.cc): it says so.
bool g_starting_from_environment = false;

std::string process_name() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

}  // namespace

// Two outputs on one file would interleave two formats in it, or one would silently replace
// the other: refused before anything starts. Outputs whose value is a PATH are compared by the
// file they lead to (base::output_identity: the device and inode where the file exists, else
// the absolute path with its directory resolved), so `a.json`, `./a.json`, `sub/../a.json`
// and a link to it are one. chrome=DIR/ names a file of its own per process: not compared.
static Status distinct_outputs(const std::vector<session::SinkSpec>& sinks) {
  std::vector<std::string> identities(sinks.size());
  const std::vector<core::SinkRegistry::Entry> entries = core::SinkRegistry::get().entries();
  for (std::size_t i = 0; i < sinks.size(); ++i) {
    const std::string& value = sinks[i].value;
    const bool path = std::any_of(entries.begin(), entries.end(), [&](const auto& e) {
      return e.key == sinks[i].key && e.value_hint == "PATH";
    });
    const bool directory =
        !value.empty() && (value.back() == '/' ||
                           (value.size() >= 4 && value.compare(value.size() - 4, 4, "/+gz") == 0));
    if (!path || value.empty() || directory) continue;
    identities[i] = base::output_identity(base::expand_path(value));
    for (std::size_t j = 0; j < i; ++j) {
      if (identities[j] != identities[i]) continue;
      return Status::Error("outputs " + sinks[j].key + "=" + sinks[j].value + " and " +
                           sinks[i].key + "=" + value +
                           " both write one file: give each output a path of its own");
    }
  }
  return {};
}

// Everything a running session owns. Session is a handle to it.
class SessionCore {
 public:
  SessionCore(std::string_view config_text, std::vector<std::shared_ptr<Sink>> extra) {
    try {
      start(config_text, std::move(extra));
    } catch (const std::exception& e) {
      errors_.add(std::string("session failed to start: ") + e.what());
      abandon();
    }
  }

  ~SessionCore() { static_cast<void>(stop()); }  // errors are already printed and kept

  bool ok() const { return errors_.empty(); }
  std::string error() const { return errors_.joined(); }
  bool running() const { return running_.load(std::memory_order_acquire); }

  Status stop() {
    if (forked_away()) return forget();
    {
      // First, and before stop_mu_: a stop_recording_session() that already has this session
      // finishes stopping it before this goes on (the lock order is always this one).
      std::lock_guard<std::recursive_mutex> registry(g_recording_mu);
      if (g_recording == this) g_recording = nullptr;
    }
    // flush() gives way from now on: a thread flushing in a loop cannot keep stop() waiting.
    stop_requested_.store(true, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(stop_mu_);
    if (running_.exchange(false, std::memory_order_acq_rel)) {
      // No request from now on; a window being recorded is cut short and written.
      stop_windows();
      // The gate closes first so no new event starts; then the collector takes what is in the
      // rings. Ranges still open now end without a ring to write to.
      sched_.reset();  // its last samples go in before the gate closes
      core::close_gate();
      if (saved_categories_) {
        core::update_enabled_categories(*saved_categories_, ~*saved_categories_);
      }
      core::ThreadRegistry::get().end_session();
      session::set_cuda_init_target(nullptr);
      if (gpu_) gpu_->disable();
      // Requests from now on are told there is no recorder; the collector's stop() closes it,
      // which writes the dumps still waiting for their time after.
      session::stop_accepting_dumps();
      try {
        collector_->stop();
        final_stats_ = collector_->stats();
      } catch (const std::exception& e) {
        errors_.add(std::string("stop failed: ") + e.what());
      }
      collector_.reset();
      gpu::KernelNoteQueue::get().end_session();
      if (gpu_) gpu_->finalize();
      gpu_.reset();
      g_session_active.store(false, std::memory_order_release);
    }
    return errors_.first();
  }

  void flush() {
    if (forked_away() || stop_requested_.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(stop_mu_);
    if (collector_) collector_->drain();
  }

  Stats stats() const {
    if (forked_away()) return {};
    std::lock_guard<std::mutex> lock(stop_mu_);
    return collector_ ? collector_->stats() : final_stats_;
  }

 private:
  // In a child forked while this session ran: the session is the parent's (see core/fork.cc).
  bool forked_away() const noexcept { return pid_ != getpid(); }

  // The child's part in the parent's session: nothing. Its collector thread does not exist here
  // (joining it would hang), its sinks' files are the parent's (closing them would remove or
  // rename them), and its locks may be held by threads that were not copied: all of it is left
  // alone, for good. The memory is the child's copy and goes with the child.
  Status forget() noexcept {
    if (running_.exchange(false, std::memory_order_relaxed)) {
      static_cast<void>(collector_.release());
      static_cast<void>(gpu_.release());
      if (sched_) sched_->forget();
      static_cast<void>(sched_.release());
      if (control_) control_->forget();
      static_cast<void>(control_.release());
      if (windows_) windows_->forget();
      new std::shared_ptr<session::WindowControl>(std::move(windows_));
    }
    return {};
  }

  void start(std::string_view config_text, std::vector<std::shared_ptr<Sink>> extra) {
    session::SessionConfig config;
    session::register_builtin_sinks();
    if (Status s = session::parse_config(config_text, &config); !s.ok()) {
      errors_.add(s.message());
      return;
    }
    bool expected = false;
    if (!g_session_active.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      const std::string other = describe(recording_session());
      errors_.add("another gpuprobe session is already recording" +
                  (other.empty() ? std::string() : " (" + other + ")") + "; stop it first");
      return;
    }
    owns_active_ = true;
    session::watch_forks();
    // Before CUPTI starts, whose decoder interns the kernel names of this session.
    core::NameTable::get().begin_session();
    core::NameTable::get().set_limit(config.recording.max_names);
    core::NameTable::get().reset_overflowed();

    const core::ClockSource clock =
        config.recording.clock == core::ClockChoice::kMonotonic ||
                (config.recording.clock == core::ClockChoice::kAuto && !core::tsc_is_invariant())
            ? core::ClockSource::kMonotonic
            : core::ClockSource::kTsc;
    const core::Calibration calibration(clock);

    // The library CUDA_INJECTION64_PATH names may be loading inside cuInit right now: CUPTI
    // started eagerly there made the program see no device (H100, CUDA 13). It waits for
    // CUDA's initialization instead (which, in that library, records none: cuda_injection.cc).
    if (session::cuda_will_inject_this_copy()) config.gpu.start_at_cuda_init = true;
    gpu::StartedGpuSource gpu = gpu::start_gpu_source(config.gpu, calibration);
    // Not an error of the session: it goes on recording CPU events, and says so once.
    if (config.gpu.kinds != 0 && !gpu.cupti && !gpu.deferred) core::print_notice(gpu.status);
    gpu_ = std::move(gpu.source);
    if (gpu.deferred) deferred_gpu_ = static_cast<gpu::DeferredGpuSource*>(gpu_.get());

    TraceInfo info;
    info.pid = static_cast<std::int64_t>(getpid());
    info.process_name = process_name();
    info.start_wall_ns = calibration.start().wall_ns;
    info.rank = config.recording.rank;
    info.world_size = config.recording.world_size;
    info.clock = std::string(core::clock_name(clock));
    info.config = std::string(config_text);
    info.nvtx = config.recording.nvtx && detail::nvtx_tool_attached();
    info.category_names = core::category_names();
    info.devices = gpu_->devices();

    if (Status s = distinct_outputs(config.sinks); !s.ok()) {
      errors_.add(s.message());
      abandon();
      return;
    }
    std::vector<core::SinkSlot> slots;
    for (const session::SinkSpec& spec : config.sinks) {
      std::unique_ptr<Sink> sink;
      if (Status s = session::create_output(spec, config.metrics, &sink); !s.ok()) {
        errors_.add(s.message());
        continue;
      }
      slots.push_back(core::SinkSlot{std::move(sink), spec.key + "=" + spec.value});
    }
    for (std::shared_ptr<Sink>& sink : extra) {
      if (sink) slots.push_back(core::SinkSlot{std::move(sink), "custom"});
    }
    // On-demand windows, when something can ask for one: the control socket or POST /capture.
    std::shared_ptr<session::WindowTap> tap;
    const bool serves_http =
        std::any_of(config.sinks.begin(), config.sinks.end(),
                    [](const session::SinkSpec& s) { return s.key == "metrics"; });
    if (config.control.socket || serves_http) tap = std::make_shared<session::WindowTap>();
    std::shared_ptr<flight::FlightRecorder> flight;
    if (config.flight.seconds > 0) {
      flight =
          std::make_shared<flight::FlightRecorder>(config.flight, clock, calibration.time_base());
      // First: the collector closes sinks in order, and the recorder's close() writes the dumps
      // still waiting, which the metrics outputs closed after it then count.
      slots.insert(slots.begin(),
                   core::SinkSlot{flight, "flight=" + std::to_string(config.flight.seconds)});
    }
    std::vector<core::SinkSlot> open;
    for (core::SinkSlot& slot : slots) {
      Status s;
      try {
        s = slot.sink->open(info);
      } catch (...) {
        s = Status::Error("open threw an exception");
      }
      if (s.ok()) {
        open.push_back(std::move(slot));
      } else {
        errors_.add("sink " + slot.label + ": " + s.message());
        if (slot.sink == flight) flight.reset();
      }
    }
    for (const core::SinkSlot& slot : open) {
      description_.outputs += (description_.outputs.empty() ? "" : ", ") + slot.label;
    }
    if (open.empty() && !slots.empty()) {
      errors_.add("no output could be opened; not recording");
      gpu_.reset();
      abandon();
      return;
    }
    // Not an output of the session's (its opening cannot fail): joins the ones that opened.
    if (tap && tap->open(info).ok()) open.push_back(core::SinkSlot{tap, "window"});

    g_last_epoch = g_last_epoch % detail::kMaxEpoch + 1;
    core::ThreadRegistry::get().begin_session(g_last_epoch, config.recording.ring_capacity,
                                              config.recording.rings_mb << 20);
    if (config.recording.categories) {
      // For this session: the process-wide switches come back when it stops.
      saved_categories_ = core::enabled_categories();
      core::update_enabled_categories(*config.recording.categories, ~*config.recording.categories);
    }
    collector_ = std::make_unique<core::Collector>(
        std::move(open), calibration,
        core::CollectorOptions{g_last_epoch, config.recording.ring_capacity,
                               std::chrono::milliseconds(config.recording.flush_ms), gpu_.get(),
                               gpu.status, info},
        &errors_);
    gpu::KernelNoteQueue::get().begin_session(gpu.cupti);
    if (flight) {
      flight->set_stats_source([collector = collector_.get()] { return collector->stats(); });
      flight->set_window_hook([gpu = gpu_.get()](std::uint64_t to_tick) {
        if (gpu != nullptr) gpu->record_until(to_tick);
      });
    }
    session::set_active_flight(std::move(flight));
    collector_->start();
    running_.store(true, std::memory_order_release);
    // Only once running: stop() is then what clears it, before gpu_ goes.
    if (deferred_gpu_ != nullptr) start_cupti_at_cuda_init();
    if (tap)
      start_windows(std::move(tap), clock, calibration.time_base().ns_per_tick(),
                    config.control.socket);
    // Step 0 starts now, when recording does: not at the calibration sample, which came before
    // CUPTI started and the outputs opened.
    core::reset_steps(core::read_ticks(clock));
    core::open_gate(core::GateSettings{g_last_epoch, info.nvtx, clock == core::ClockSource::kTsc});
    if (config.sched.period_ns > 0)
      sched_ = std::make_unique<session::SchedSampler>(config.sched.period_ns);
    std::lock_guard<std::recursive_mutex> registry(g_recording_mu);
    description_.id = ++g_last_id;
    description_.from_environment = g_starting_from_environment;
    g_recording = this;
  }

 public:
  // stop_recording_session(): stops the recording session, if any, under the registry lock.
  static Status stop_recording() noexcept {
    try {
      std::lock_guard<std::recursive_mutex> registry(g_recording_mu);
      return g_recording != nullptr ? g_recording->stop() : Status();
    } catch (...) {
      return Status::Error("stop failed");
    }
  }

  // The recording session's description; id 0 when none records (or in a forked child, where
  // the parent's session is not this process's).
  static RecordingSession recording() {
    std::lock_guard<std::recursive_mutex> registry(g_recording_mu);
    if (g_recording == nullptr || g_recording->forked_away()) return {};
    return g_recording->description_;
  }

  // Calls fn(session) under the registry lock when the recording session has id `id`.
  template <typename Fn>
  static void with_recording(std::uint64_t id, Fn&& fn) {
    std::lock_guard<std::recursive_mutex> registry(g_recording_mu);
    if (g_recording != nullptr && !g_recording->forked_away() &&
        g_recording->description_.id == id) {
      fn(*g_recording);
    }
  }

 private:
  // The session's WindowControl and, with control=on, its control socket.
  void start_windows(std::shared_ptr<session::WindowTap> tap, core::ClockSource clock,
                     double ns_per_tick, bool socket) {
    core::Collector* collector = collector_.get();
    session::WindowHooks hooks{[clock] { return core::read_ticks(clock); },
                               [collector] { collector->drain(); },
                               [collector] { return collector->stats(); }, nullptr, ns_per_tick};
    if (core::GpuSource* gpu = gpu_.get()) {
      hooks.gpu_until = [gpu](std::uint64_t tick) { gpu->record_until(tick); };
    }
    windows_ = std::make_shared<session::WindowControl>(std::move(tap), std::move(hooks));
    session::set_active_windows(windows_);
    if (!socket) return;
    control_ = std::make_unique<session::ControlServer>();
    if (Status s = control_->start(); !s.ok()) {
      // Not an error of the session: it records as asked, and says once that it cannot be reached.
      core::print_notice(s.message());
      control_.reset();
      return;
    }
    session::set_active_control_server(control_.get());
  }

  // Before the collector stops: the control thread ends, then the window (written, cut short).
  void stop_windows() noexcept {
    if (control_) {
      session::set_active_control_server(nullptr);
      control_->stop();
      control_.reset();
    }
    if (windows_) {
      session::set_active_windows(nullptr);
      windows_->stop();
      windows_.reset();
    }
  }

  // cupti_start=cuda: CUDA's initialization starts CUPTI (session/cuda_injection.h). Where the
  // program initialized CUDA before this session, none is coming: CUPTI starts now — unless the
  // driver names this copy as its injection library, which it may be loading right now, inside
  // cuInit, where the driver is not to be asked.
  void start_cupti_at_cuda_init() noexcept {
    session::set_cuda_init_target(deferred_gpu_);
    if (session::cuda_will_inject_this_copy() || !gpu::cuda_initialized_in_process()) return;
    try {
      std::string why;
      if (!deferred_gpu_->activate(&why, false) && !why.empty())
        core::print_notice("CUPTI unavailable: " + why);
    } catch (const std::exception& e) {
      core::print_notice(std::string("CUPTI unavailable: ") + e.what());
    }
  }

  void abandon() {
    if (owns_active_) g_session_active.store(false, std::memory_order_release);
    owns_active_ = false;
  }

  const pid_t pid_ = getpid();
  core::ErrorLog errors_;
  bool owns_active_ = false;
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_requested_{false};
  std::optional<std::uint32_t> saved_categories_;  // switches before `categories=` applied
  mutable std::mutex stop_mu_;
  std::unique_ptr<core::GpuSource> gpu_;            // declared before the collector, which uses it
  gpu::DeferredGpuSource* deferred_gpu_ = nullptr;  // gpu_, when CUDA's initialization starts it
  std::unique_ptr<core::Collector> collector_;
  std::unique_ptr<session::SchedSampler> sched_;     // with sched=
  std::shared_ptr<session::WindowControl> windows_;  // on-demand windows, when they can be asked
  std::unique_ptr<session::ControlServer> control_;  // with control=on
  Stats final_stats_;
  RecordingSession description_;  // once started: its id, origin and outputs
};

}  // namespace detail

namespace session {
void set_starting_from_environment(bool starting) noexcept {
  detail::g_starting_from_environment = starting;
}

void forget_session_in_child() noexcept {
  detail::g_session_active.store(false, std::memory_order_relaxed);
  forget_flight_in_child();
  forget_cuda_init_target_in_child();
  forget_control_in_child();
  forget_windows_in_child();
}
}  // namespace session

namespace core {
void set_last_epoch_for_testing(std::uint32_t epoch) noexcept { detail::g_last_epoch = epoch; }
}  // namespace core

Session::Session(std::string_view config) : Session(config, {}) {}

Session::Session(std::string_view config, std::vector<std::shared_ptr<Sink>> extra) {
  try {
    core_ = std::make_unique<detail::SessionCore>(config, std::move(extra));
  } catch (...) {
    std::fputs("gpuprobe: out of memory starting a session\n", stderr);
  }
}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

bool Session::ok() const noexcept { return core_ != nullptr && core_->ok(); }

std::string Session::error() const {
  return core_ ? core_->error() : std::string("out of memory starting a session");
}

bool Session::running() const noexcept { return core_ != nullptr && core_->running(); }

Status Session::stop() {
  return core_ ? core_->stop() : Status::Error("out of memory starting a session");
}

void Session::flush() {
  if (core_) core_->flush();
}

Stats Session::stats() const { return core_ ? core_->stats() : Stats{}; }

std::string Session::help() {
  session::register_builtin_sinks();
  return session::config_help();
}

Status Session::check(std::string_view config) {
  session::register_builtin_sinks();
  session::SessionConfig parsed;
  if (Status s = session::parse_config(config, &parsed); !s.ok()) return s;
  return detail::distinct_outputs(parsed.sinks);
}

Status stop_recording_session() noexcept { return detail::SessionCore::stop_recording(); }

RecordingSession recording_session() noexcept {
  try {
    return detail::SessionCore::recording();
  } catch (...) {
    return {};
  }
}

std::string describe(const RecordingSession& session) {
  if (session.id == 0) return {};
  std::string out = session.from_environment
                        ? "the session the GPUPROBE environment variable started"
                        : "a session the program started";
  out += session.outputs.empty() ? ", with no outputs" : ", writing " + session.outputs;
  return out;
}

Stats recording_session_stats(std::uint64_t id) noexcept {
  try {
    Stats stats;
    detail::SessionCore::with_recording(id, [&](detail::SessionCore& s) { stats = s.stats(); });
    return stats;
  } catch (...) {
    return {};
  }
}

void flush_recording_session(std::uint64_t id) noexcept {
  try {
    detail::SessionCore::with_recording(id, [](detail::SessionCore& s) { s.flush(); });
  } catch (...) {
  }
}

Status dump(std::string_view reason, std::string* path) noexcept {
  try {
    return session::request_dump("api", reason, path);
  } catch (...) {
    return Status::Error("dump: out of memory");
  }
}

}  // namespace gpuprobe

// At global scope, where the declaration's default visibility applies (cuda_injection.h).
extern "C" int gpuprobe_session_running(void) noexcept {
  return gpuprobe::detail::g_session_active.load(std::memory_order_acquire) ? 1 : 0;
}
