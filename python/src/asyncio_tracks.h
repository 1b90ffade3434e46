// asyncio tasks' ranges on tracks of their own: a range opened inside a task goes on the task's
// track (named "asyncio <task>"), not the thread's, as tasks interleave on one thread. Internal
// to the module.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>

#include "open_stack.h"

namespace gpuprobe::python {

/// Lets current_track() look for asyncio's C parts once `_asyncio` is imported. Called once, at
/// the module's import.
void watch_asyncio();

/// The track for ranges opened now on the thread whose stack is `open`: the running task's
/// (named in this session), or 0 — the thread's. Only "is a loop running here?" is asked outside
/// a loop. Never leaves a Python error set.
std::uint32_t current_track(OpenStack& open);

}  // namespace gpuprobe::python
