// Reads the dumps of PyTorch's flight recorder (formats/torch_flight_recorder.h): one pickle per
// rank, read with readers/pickle_value.h, so that no code in the file runs.
#pragma once

#include <string>
#include <vector>

#include "formats/torch_flight_recorder.h"
#include "gpuprobe/status.hpp"

namespace gpuprobe::readers {

// Whether `path` looks like one: a file whose name ends in the rank's digits and whose first
// byte opens a pickle (protocol 2 or later).
bool looks_like_torch_fr_dump(const std::string& path);

// The files in directory `dir` that look like dumps, unordered; none when it cannot be read.
std::vector<std::string> torch_fr_dump_files(const std::string& dir);

// Reads one dump; the rank comes from the file name. On bad input one error naming the file.
Status read_torch_fr_dump(const std::string& path, formats::torch_fr::Dump* out);

// Reads every dump in directory `dir`, ordered by rank; an error when there is none or two
// claim the same rank.
Status read_torch_fr_dir(const std::string& dir, std::vector<formats::torch_fr::Dump>* out);

}  // namespace gpuprobe::readers
