// SIGTERM, SIGINT and SIGHUP for a program traced through GPUPROBE: the outputs are written, then
// the signal does what it would have done (see exit_signals.cc).
#pragma once

namespace gpuprobe::session {

// Catches the three signals where their disposition is the default (a program's own handler is
// left alone: the program then exits its own way). Once per process.
void catch_exit_signals() noexcept;

// fork()'s child handler: the child's signals go back to the default, and it forgets the pipe to
// the parent's watcher thread (which the child does not have).
void forget_exit_signals_in_child() noexcept;

}  // namespace gpuprobe::session
