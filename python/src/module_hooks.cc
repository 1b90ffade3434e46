// The forward hooks of gpuprobe.torch.instrument, in C.
//
// A module call runs its hooks whether or not a session records, so their cost with none is what
// every user of `instrument` pays always. Written in Python, each hook was a frame plus the
// check that Dynamo folds away (torch.compiler.is_dynamo_compiling(), which had to come first so
// that traced code never reads gpuprobe's state): 0.25 µs per module call over empty hooks
// (bench/python/module_hooks.py). In C the hooks are calls with no frame: with no session the
// pre-hook reads the gate word and the post-hook this thread's open ranges, and both return.
//
// Dynamo never runs them. gpuprobe.torch registers each with torch.compiler.substitute_in_graph
// beside a Python stand-in that returns None, which Dynamo inlines where it traces a module call:
// no graph break, no guard on gpuprobe's state, nothing recorded inside compiled code. Called
// from a compiled module's own eager __call__ they are C functions, which Dynamo never compiles
// as frames.
//
// The table of instrumented modules is a dict keyed by id(module) (keyed by the module itself it
// would keep every instrumented model alive): (forward range, backward range or None). A
// module with a backward range calls back into Python while a session records: note(module,
// args) before its forward, attach(backward_range, module, output) after it
// (gpuprobe/torch/modules.py). A hook never raises into the program: an error is reported as
// unraisable and the forward goes on.
#include "module_hooks.h"

#include <utility>

#include "gpuprobe/gpuprobe.hpp"
#include "range_type.h"

namespace gpuprobe::python {
namespace {

PyObject* g_ranges = nullptr;  // dict: id(module) -> (forward, backward or None), owned
PyObject* g_note = nullptr;    // owned
PyObject* g_attach = nullptr;  // owned

// The entry of `module` in the table (borrowed), or nullptr when it has none.
PyObject* entry_of(PyObject* module) {
  if (g_ranges == nullptr) return nullptr;
  PyObject* key = PyLong_FromVoidPtr(module);
  if (key == nullptr) return nullptr;
  PyObject* entry = PyDict_GetItemWithError(g_ranges, key);
  Py_DECREF(key);
  if (entry != nullptr && (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2)) return nullptr;
  return entry;
}

// A hook's end: None, with any error it met reported as unraisable rather than raised into the
// module call.
PyObject* done(PyObject* hook) {
  if (PyErr_Occurred()) PyErr_WriteUnraisable(hook);
  Py_RETURN_NONE;
}

void drop(PyObject* result) { Py_XDECREF(result); }

PyObject* module_pre_hook(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (GPUPROBE_LIKELY(detail::g_gate.load(std::memory_order_relaxed) == 0)) Py_RETURN_NONE;
  if (nargs != 2) Py_RETURN_NONE;
  PyObject* entry = entry_of(args[0]);
  if (entry == nullptr) return done(self);
  PyObject* entered = range_enter(PyTuple_GET_ITEM(entry, 0), nullptr);
  if (entered == nullptr) return done(self);
  Py_DECREF(entered);
  if (PyTuple_GET_ITEM(entry, 1) != Py_None && g_note != nullptr) {
    drop(PyObject_Vectorcall(g_note, args, 2, nullptr));
  }
  return done(self);
}

PyObject* module_post_hook(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  // The pre-hook's entry, if it made one, is open on this thread.
  if (GPUPROBE_LIKELY(!thread_has_open_ranges())) Py_RETURN_NONE;
  if (nargs != 3) Py_RETURN_NONE;
  PyObject* entry = entry_of(args[0]);
  if (entry == nullptr) return done(self);
  drop(range_exit(PyTuple_GET_ITEM(entry, 0), nullptr, 0));
  PyObject* backward = PyTuple_GET_ITEM(entry, 1);
  if (backward != Py_None && g_attach != nullptr) {
    PyObject* const attach_args[] = {backward, args[0], args[2]};
    drop(PyObject_Vectorcall(g_attach, attach_args, 3, nullptr));
  }
  return done(self);
}

PyObject* module_hooks_bind(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3 || !PyDict_CheckExact(args[0]) || !PyCallable_Check(args[1]) ||
      !PyCallable_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "_module_hooks_bind(ranges: dict, note, attach)");
    return nullptr;
  }
  for (auto [field, value] : {std::pair{&g_ranges, args[0]}, std::pair{&g_note, args[1]},
                              std::pair{&g_attach, args[2]}}) {
    Py_INCREF(value);
    Py_XSETREF(*field, value);
  }
  Py_RETURN_NONE;
}

PyMethodDef kHooks[] = {
    {"module_pre_hook", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(module_pre_hook)),
     METH_FASTCALL,
     "module_pre_hook(module, args, /)\n--\n\nThe forward pre-hook of an instrumented module: "
     "enters its range while a session records. Internal to gpuprobe.torch."},
    {"module_post_hook", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(module_post_hook)),
     METH_FASTCALL,
     "module_post_hook(module, args, output, /)\n--\n\nThe forward hook of an instrumented "
     "module: exits the range its pre-hook entered. Internal to gpuprobe.torch."},
    {"_module_hooks_bind", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(module_hooks_bind)),
     METH_FASTCALL,
     "_module_hooks_bind(ranges, note, attach, /)\n--\n\nGives the module hooks their table, "
     "{id(module): (forward range, backward range or None)}, and the Python functions a "
     "backward range needs."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void add_module_hooks(pybind11::module_& m) {
  for (PyMethodDef& def : kHooks) {
    if (def.ml_name == nullptr) break;
    PyObject* fn = PyCFunction_NewEx(&def, nullptr, m.attr("__name__").ptr());
    if (fn == nullptr) throw pybind11::error_already_set();
    m.add_object(def.ml_name, pybind11::reinterpret_steal<pybind11::object>(fn));
  }
}

}  // namespace gpuprobe::python
