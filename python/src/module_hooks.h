// `_core.module_pre_hook` and `_core.module_post_hook`: the forward hooks
// gpuprobe.torch.instrument puts on every module. Internal to the module.
#pragma once

#include <pybind11/pybind11.h>

namespace gpuprobe::python {

/// Adds the two hooks and `_module_hooks_bind(ranges, is_grad_enabled, Tensor, run_node,
/// partial)`, which gives them the table of instrumented modules and what backward ranges need,
/// to `m`.
void add_module_hooks(pybind11::module_& m);

}  // namespace gpuprobe::python
