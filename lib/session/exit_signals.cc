// A program traced through GPUPROBE and stopped by SIGTERM, SIGINT or SIGHUP — an operator
// stopping a server, Ctrl-C — gets its trace, as Nsight Systems writes one on those signals.
//
// The handler only writes the signal number to a pipe (async-signal-safe); a watcher thread
// reads it, stops the recording session (drains, writes and renames the outputs), puts the
// signal's default disposition back and raises it again, so that the process ends as it would
// have — killed by that signal, as its parent expects. Signals with a handler of the program's
// are not touched: the program decides, and an orderly exit writes the outputs anyway.
#include "session/exit_signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <thread>

#include "gpuprobe/session.hpp"

namespace gpuprobe::session {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

int g_pipe[2] = {-1, -1};
std::atomic<bool> g_caught[3] = {};  // per kSignals entry: our handler is installed

void on_signal(int signo) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(signo);
  if (g_pipe[1] >= 0) static_cast<void>(write(g_pipe[1], &byte, 1));
  errno = saved;
}

void watch(int read_fd) {
  unsigned char byte = 0;
  for (;;) {
    const ssize_t n = read(read_fd, &byte, 1);
    if (n == 1) break;
    if (n < 0 && errno == EINTR) continue;
    return;  // the pipe is gone
  }
  const int signo = byte;
  static_cast<void>(stop_recording_session());
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signo, &dfl, nullptr);
  // Unblock it on this thread, which raises it: the process ends by the signal.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  kill(getpid(), signo);
}

}  // namespace

void catch_exit_signals() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    if (pipe2(g_pipe, O_CLOEXEC) != 0) return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);  // the watcher takes no signal itself
    try {
      std::thread(watch, g_pipe[0]).detach();
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
    } catch (...) {
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
      close(g_pipe[0]);
      close(g_pipe[1]);
      g_pipe[0] = g_pipe[1] = -1;
      return;
    }
    for (int i = 0; i < 3; ++i) {
      struct sigaction old = {};
      if (sigaction(kSignals[i], nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
          (old.sa_flags & SA_SIGINFO) != 0)
        continue;
      struct sigaction ours = {};
      ours.sa_handler = &on_signal;
      sigemptyset(&ours.sa_mask);
      ours.sa_flags = SA_RESTART;
      if (sigaction(kSignals[i], &ours, nullptr) == 0) g_caught[i] = true;
    }
  });
}

void forget_exit_signals_in_child() noexcept {
  for (int i = 0; i < 3; ++i) {
    if (!g_caught[i].exchange(false)) continue;
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(kSignals[i], &dfl, nullptr);
  }
  // The watcher thread is the parent's: a signal the child gets must not reach it.
  if (g_pipe[1] >= 0) close(g_pipe[1]);
  if (g_pipe[0] >= 0) close(g_pipe[0]);
  g_pipe[0] = g_pipe[1] = -1;
}

}  // namespace gpuprobe::session
