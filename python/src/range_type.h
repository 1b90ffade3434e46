// The `gpuprobe.range` type's entry and exit, for the other C types of `gpuprobe._core` that
// open ranges without Python's `with` machinery. Internal to the module.
//
// The functions every recording range runs, here and in the module's other files, are marked
// [[gnu::hot]]: the linker keeps them together in .text.hot, so that a range whose lines the
// request's own work has evicted fetches one page of code (python/CMakeLists.txt says why).
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace gpuprobe::python {

/// `range.__enter__()`: opens the range on this thread; a new reference to `range`, or nullptr
/// with a Python error set.
PyObject* range_enter(PyObject* range, PyObject* unused);

/// `range.__exit__(...)`: closes this thread's innermost entry of `range`; returns False (a new
/// reference) and leaves any pending Python error alone.
PyObject* range_exit(PyObject* range, PyObject* const* args, Py_ssize_t nargs);

/// Whether this thread has a range open through this module (entered, session or not, and not
/// yet exited).
bool thread_has_open_ranges();

}  // namespace gpuprobe::python
