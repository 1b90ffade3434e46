// `_core.graph_runs`: the wrapper gpuprobe.torch.watch_compile() puts on Inductor's
// CompiledFxGraph.__call__. Internal to the module.
#pragma once

#include <pybind11/pybind11.h>

namespace gpuprobe::python {

/// Adds the type `graph_runs` to `m`; its ranges are of `range_type` (gpuprobe.range), which
/// the module holds for as long as it is loaded.
void add_graph_runs(pybind11::module_& m, PyObject* range_type);

}  // namespace gpuprobe::python
