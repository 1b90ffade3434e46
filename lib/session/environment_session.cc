// The gate word, and the session the GPUPROBE environment variable starts.
//
// They share a file on purpose: every recording call site references g_gate, so this object file
// is linked into any program that records, even from a static library, and with it the static
// initializer below. Put elsewhere, the initializer could be dropped by the linker in exactly
// the programs the variable is for: those that have ranges but never create a Session.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "gpuprobe/detail/gate.hpp"
#include "gpuprobe/session.hpp"
#include "session/cuda_injection.h"
#include "session/exit_signals.h"
#include "session/session_origin.h"

namespace gpuprobe::detail {

std::atomic<std::uint64_t> g_gate{0};

namespace {

// A process started by a traced one inherits GPUPROBE, and with it the same output paths: the
// first process of the family notes its pid in GPUPROBE_OWNER_PID, and every other one writes
// PATH with ".%p" (its pid) before the extension — trace.json becomes trace.4242.json — unless
// the path already says where with %p. Directory layouts (chrome=DIR/) are per pid already.
std::string config_for_this_process(std::string config) {
  const std::string pid = std::to_string(getpid());
  const char* owner = std::getenv("GPUPROBE_OWNER_PID");
  if (owner == nullptr) {
    setenv("GPUPROBE_OWNER_PID", pid.c_str(), 0);
    return config;
  }
  if (pid == owner) return config;
  std::string out;
  std::size_t start = 0;
  while (start <= config.size()) {
    std::size_t end = config.find(',', start);
    if (end == std::string::npos) end = config.size();
    std::string item = config.substr(start, end - start);
    const std::size_t eq = item.find('=');
    const std::string_view key = std::string_view(item).substr(0, eq);
    if (eq != std::string::npos && (key == "chrome" || key == "perfetto") &&
        item.find("%p") == std::string::npos && item.back() != '/' &&
        item.compare(item.size() >= 4 ? item.size() - 4 : 0, 4, "/+gz") != 0) {
      const std::size_t slash = item.rfind('/');
      const std::size_t base = slash == std::string::npos || slash < eq ? eq + 1 : slash + 1;
      const std::size_t dot = item.find('.', base + 1);
      item.insert(dot == std::string::npos ? item.size() : dot, ".%p");
    }
    out += (out.empty() ? "" : ",") + item;
    start = end + 1;
  }
  return out;
}

// Starts a session from GPUPROBE when the program starts (static initialization) and stops it
// when static objects are destroyed at normal exit (return from main or exit()). A crash,
// _exit() or quick_exit() leaves only the sinks' temporary files, never a half-written output.
class EnvironmentSession {
 public:
  // Stops the session now (it writes its outputs); the destructor then has nothing to do.
  void stop() noexcept { session_.reset(); }

  EnvironmentSession() {
    const char* config = std::getenv("GPUPROBE");
    if (config == nullptr || *config == '\0') return;
    // Another copy of gpuprobe in this process (Python's gpuprobe._core, a program linked with
    // gpuprobe) has the environment's session, or had it (a fork()'s child, where the parent's
    // session stopped): this one, loaded later as the CUDA or NVTX tool, stands down rather
    // than write the same files a second time or start a session the program's own copy
    // declined. (Asked of the copies themselves, not through the environment: setenv here could
    // race the program's threads, and an exec() keeps the environment but not the copies.)
    if (session::another_copy_loaded()) return;
    session::set_starting_from_environment(true);
    session_ = std::make_unique<Session>(config_for_this_process(config));
    session::set_starting_from_environment(false);
    // SIGTERM, SIGINT, SIGHUP write the trace before they end the program.
    if (session_->ok()) session::catch_exit_signals();
  }

 private:
  std::unique_ptr<Session> session_;
};

EnvironmentSession g_environment_session;

}  // namespace
}  // namespace gpuprobe::detail

namespace gpuprobe::session {

void stop_environment_session_first_at_exit() noexcept {
  // Exit handlers run in the reverse order of their registration: registered now, after CUPTI
  // registered its own while it started, this one stops the session while CUPTI still works.
  static std::atomic<bool> registered{false};
  if (registered.exchange(true)) return;
  std::atexit([] { detail::g_environment_session.stop(); });
}

}  // namespace gpuprobe::session
