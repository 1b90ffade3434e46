/// @file session.hpp
/// @brief `gpuprobe::Session`: starts recording from a config string and writes the outputs it
/// names when it stops.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuprobe/sink.hpp"
#include "gpuprobe/status.hpp"

namespace gpuprobe {

namespace detail {
class SessionCore;
}

/// A recording session.
///
/// The config string is `key=value` pairs separated by commas; `+` joins several values inside
/// one key. `Session::help()` lists every key. For example:
///
///     gpuprobe::Session session("chrome=trace.json,ring=65536");
///     if (!session.ok()) std::cerr << session.error() << "\n";
///
/// One session records at a time in a process. A session that could not start (bad config,
/// unwritable output, another session running) records nothing and says why in error(); the
/// program goes on. Ranges are recorded by whichever session records, not by a Session object:
/// while another session records (the GPUPROBE variable's, or one the program made earlier), a
/// second Session's ok() is false, its error() names the session recording (who started it
/// and its outputs), its own outputs are never written, and its stop() leaves the recording
/// session alone; the program's ranges go to the recording session's outputs. (The Python
/// package builds on this: its Session stands down instead of raising, see python/README.md.)
/// Stopping (stop() or the destructor) drains every thread's ring, writes and closes the outputs. A
/// session is never restarted: create a new one.
///
/// Setting the environment variable `GPUPROBE` to a config string starts a session when the
/// program loads gpuprobe and stops it at normal exit, with no code change.
class Session {
 public:
  /// Starts recording with the sinks the config names.
  explicit Session(std::string_view config);

  /// Starts recording with the sinks the config names plus `extra` sinks.
  Session(std::string_view config, std::vector<std::shared_ptr<Sink>> extra);

  /// Stops the session if it is still running.
  ~Session();

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// True while no error has happened: the session started and every output works so far.
  bool ok() const noexcept;

  /// Every error so far, one per line; empty when ok().
  std::string error() const;

  /// True between a successful start and stop().
  bool running() const noexcept;

  /// Stops recording, drains all rings, writes and closes the outputs. Returns the first error of
  /// the session, if any. Further calls return the same.
  Status stop();

  /// Drains every thread's ring now and hands the events to the outputs, instead of waiting for
  /// the collector's next period. Returns when done. No effect when not running.
  void flush();

  /// Totals and per-thread counts as of the collector's latest drain (final after stop()).
  Stats stats() const;

  /// The config keys with their values and defaults, for --help output.
  static std::string help();

  /// The error a Session of `config` would have for a mistake in the config string itself (an
  /// unknown key, a bad value, two outputs on one file), or OK. Starts nothing, opens nothing
  /// and prints nothing: for front ends that report config mistakes their own way.
  static Status check(std::string_view config);

 private:
  std::unique_ptr<detail::SessionCore> core_;
};

/// Stops the session that is recording, whichever owns it (the GPUPROBE variable's, or one the
/// program made), and writes its outputs; OK when none records. For code that ends the process
/// another way than a normal exit: a signal handler's thread, an interpreter's exit hook (the
/// Python package registers one with `atexit`). Later calls on that Session find it stopped.
Status stop_recording_session() noexcept;

/// The session recording now, as another part of the program sees it.
struct RecordingSession {
  std::uint64_t id = 0;           ///< 0 when none records; each session that starts has its own
  bool from_environment = false;  ///< started by the GPUPROBE environment variable
  std::string outputs;  ///< the outputs it writes, as its config names them, ", "-separated
};

/// The session recording now (id 0 when none does). Never throws.
RecordingSession recording_session() noexcept;

/// The session recording now described for a person: "the session the GPUPROBE environment
/// variable started, writing chrome=trace.json"; "" when none records.
std::string describe(const RecordingSession& session);

/// Session::stats() of the recording session whose id is `id`; empty Stats when that session
/// no longer records. Never throws.
Stats recording_session_stats(std::uint64_t id) noexcept;

/// Session::flush() of the recording session whose id is `id`; nothing when that session no
/// longer records. Never throws.
void flush_recording_session(std::uint64_t id) noexcept;

/// Asks the flight recorder of the session that is recording (`flight=SECONDS`) for a dump: the
/// last SECONDS before this call and `dump_after` after it, written by the recorder's own thread
/// into `dump=DIR` while recording goes on. Returns at once; `path`, when given, gets the
/// directory the dump will have (it appears, complete, once written). An error when no session
/// with a flight recorder is recording, or when `dump_max_per_hour` is reached; a request is
/// not held back by `dump_cooldown`, which is for triggers. A dump already being recorded that
/// covers this moment is the answer, not a second one. Never throws.
Status dump(std::string_view reason, std::string* path = nullptr) noexcept;

}  // namespace gpuprobe
