// `gpuprobe.range`'s __enter__ and __exit__, bound to a range without allocating. Internal to
// the module.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace gpuprobe::python {

/// Makes `range_type`'s __enter__ and __exit__ (range_type.h's range_enter and range_exit) the
/// descriptors of range_methods.cc. False with a Python error set if that failed.
[[nodiscard]] bool add_range_methods(PyObject* range_type);

}  // namespace gpuprobe::python
