// A directory that belongs to one user alone (mode 0700), such as the one holding gpuprobe's
// control sockets (session/control_socket.h). It is opened, never followed through a link, and
// checked on the open descriptor, so that what is checked is what is used: a directory planted by
// another user (in /tmp, say), one readable or writable by group or others, or a symbolic link in
// its place is refused with one error naming the path and why.
#pragma once

#include <sys/types.h>

#include <string>

#include "gpuprobe/status.hpp"

namespace gpuprobe::base {

// Opens `path` (an absolute path) as a directory owned by `owner` with no group or other
// permission bits, without following a link as its last component. `create`: makes it first
// (mode 0700) when it does not exist; its parent must exist. `*fd` gets a read-only
// directory descriptor (close-on-exec) to use with openat()/"/proc/self/fd/N/NAME".
[[nodiscard]] Status open_private_directory(const std::string& path, bool create, uid_t owner,
                                            int* fd);

}  // namespace gpuprobe::base
