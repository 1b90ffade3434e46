// fork() while gpuprobe records: the child inherits no recording session (see fork.cc).
#pragma once

namespace gpuprobe::session {

// Installs the fork handlers, once; every session start calls it.
void watch_forks() noexcept;

// The child's handler: no session is recording in the child (session.cc).
void forget_session_in_child() noexcept;

}  // namespace gpuprobe::session
