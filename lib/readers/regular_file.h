// Opening a file that a reader expects to be a regular file. A FIFO, a socket or a device in its
// place (`mkfifo trace.json`, a dump listing /dev/zero) is refused with one error instead of
// blocking the open, blocking every read or never reaching the end: the open does not block
// (O_NONBLOCK) and fstat decides before a byte is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpuprobe/status.hpp"

namespace gpuprobe::readers {

// Opens `path` read-only (close-on-exec) and returns its descriptor in `*fd` and its size in
// `*size`; an error "<path>: cannot open: ..." or "<path>: not a regular file (...)" otherwise,
// with nothing left open.
Status open_regular_file(const std::string& path, int* fd, std::uint64_t* size);

// Reads all of regular file `path` into `*out`; an error when it holds more than `max_bytes`.
Status read_regular_file(const std::string& path, std::size_t max_bytes, std::string* out);

}  // namespace gpuprobe::readers
