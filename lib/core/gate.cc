// The gate word, and the session the GPUPROBE environment variable starts.
//
// They share a file on purpose: every recording call site references g_gate, so this object file
// is linked into any program that records, even from a static library, and with it the static
// initializer below. Put elsewhere, the initializer could be dropped by the linker in exactly
// the programs the variable is for: those that have ranges but never create a Session.
#include <cstdlib>
#include <memory>

#include "gpuprobe/detail/gate.hpp"
#include "gpuprobe/session.hpp"

namespace gpuprobe::detail {

std::atomic<std::uint64_t> g_gate{0};

namespace {

// Starts a session from GPUPROBE when the program starts (static initialization) and stops it
// when static objects are destroyed at normal exit (return from main or exit()). A crash,
// _exit() or quick_exit() leaves only the sinks' temporary files, never a half-written output.
class EnvironmentSession {
 public:
  EnvironmentSession() {
    const char* config = std::getenv("GPUPROBE");
    if (config != nullptr && *config != '\0') session_ = std::make_unique<Session>(config);
  }

 private:
  std::unique_ptr<Session> session_;
};

const EnvironmentSession g_environment_session;

}  // namespace
}  // namespace gpuprobe::detail
