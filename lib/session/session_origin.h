// Who started a session, for the message of a Session that finds it recording
// (RecordingSession::from_environment).
#pragma once

namespace gpuprobe::session {

// True around the start of the session the GPUPROBE variable names (environment_session.cc):
// that session is described as the environment's. Static initialization only: one thread.
void set_starting_from_environment(bool starting) noexcept;

}  // namespace gpuprobe::session
