// `_core.Session`: gpuprobe.Session, the C++ Session for Python. Internal to the module.
#pragma once

#include <pybind11/pybind11.h>

namespace gpuprobe::python {

/// Adds the type `Session` to `m`.
void add_session(pybind11::module_& m);

}  // namespace gpuprobe::python
