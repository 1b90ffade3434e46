// What a process forked while gpuprobe records inherits, and what its child does with it.
//
// The child does not record. It inherits the parent's session without its collector thread
// (fork copies only the calling thread) and with the parent's output files, which are not the
// child's to write or rename; so in the child that session is dead: its gate is closed, its stop()
// and destructor only forget it (SessionCore checks the pid), and nothing reaches the parent's
// files. The child may start a session of its own with other outputs.
//
// The locks a range or a session start takes are held across fork() (prepare/parent/child
// handlers, in one fixed order), so that the child never inherits one locked by a thread that
// does not exist there — the deadlock a child met on its first range.
#include <pthread.h>

#include "session/fork.h"

#include "core/categories.h"
#include "core/name_table.h"
#include "core/thread_registry.h"
#include "gpuprobe/detail/gate.hpp"
#include "session/exit_signals.h"

namespace gpuprobe::session {

namespace {

void prepare() noexcept {
  core::lock_categories_for_fork();
  core::ThreadRegistry::get().lock_for_fork();
  core::NameTable::get().lock_for_fork();
}

void parent() noexcept {
  core::NameTable::get().unlock_after_fork();
  core::ThreadRegistry::get().unlock_after_fork();
  core::unlock_categories_after_fork();
}

void child() noexcept {
  detail::g_gate.store(0, std::memory_order_relaxed);  // nothing records in the child
  parent();
  forget_session_in_child();
  forget_exit_signals_in_child();
}

}  // namespace

// Called by every session start: until one starts, nothing takes these locks. (A static
// initializer here could be dropped by the linker from a static library.)
void watch_forks() noexcept {
  static const int registered = pthread_atfork(&prepare, &parent, &child);
  static_cast<void>(registered);
}
}  // namespace gpuprobe::session
