// `gpuprobe report --flight-recorder DIR`: PyTorch's flight recorder dumps of several ranks,
// matched by process group and sequence id, and NCCL's sends with their receives
// (analysis/collective_match.h, analysis/p2p_match.h); the first collective not every rank
// joined alike, or send not received, and — where DIR also holds gpuprobe's traces of those
// ranks — what each rank was doing on gpuprobe's timeline when the first rank issued it.
#pragma once

#include <string>

namespace gpuprobe::tools {

// Prints the report (text, or JSON with `json`) to stdout; returns the exit status. With
// `merge_dir`, also writes each rank's gpuprobe trace in `dir` there, under its own name and in
// its own format, with that rank's flight recorder entries and the first mismatch added
// (tools/torch_fr_overlay.h).
int run_collective_report(const std::string& dir, bool json, const std::string& merge_dir);

}  // namespace gpuprobe::tools
