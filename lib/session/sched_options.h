// The scheduler sampler's option (`sched=`), declared beside the sampler (sched_sampler.h); the
// session config (session_config.h) puts its table together with the other layers'.
#pragma once

#include <cstdint>

#include "base/option_table.h"

namespace gpuprobe::session {

// What `sched=` chooses.
struct SchedOptions {
  // Every thread's scheduler statistics sampled this often; 0: not at all.
  std::int64_t period_ns = 0;
};

// sched=.
const base::OptionTable<SchedOptions>& sched_options();

}  // namespace gpuprobe::session
