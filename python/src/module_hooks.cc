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
// would keep every instrumented model alive): (forward range, backward range or None); a copy
// of an instrumented module is entered at its first call while a session records (adopted()),
// and a module of no interest as (None, None). For a
// module with a backward range, while a session records with autograd on, the hooks also note
// what gpuprobe/torch/backward_ranges.py describes — the autograd nodes that made the module's
// inputs (before its forward: an in-place forward replaces them) and its outputs, each given one
// pre-hook that runs backward_ranges._run_node — here in C, as that module's attach() does in
// Python for torch without substitute_in_graph: the Python version cost 7–10 µs per module call,
// most of it calls and frames; what remains is torch's own Node.register_prehook. A hook never
// raises into the program: an error is reported as unraisable and the forward goes on.
#include "module_hooks.h"

#include <cstddef>
#include <iterator>
#include <utility>

#include "gpuprobe/detail/gate.hpp"
#include "gpuprobe/gpuprobe.hpp"
#include "range_type.h"

namespace gpuprobe::python {
namespace {

// Given by _module_hooks_bind, owned.
PyObject* g_ranges = nullptr;        // dict: id(module) -> (forward, backward or None)
PyObject* g_grad_enabled = nullptr;  // torch.is_grad_enabled
PyObject* g_tensor = nullptr;        // torch.Tensor
PyObject* g_run_node = nullptr;      // backward_ranges._run_node
PyObject* g_partial = nullptr;       // functools.partial
PyObject* g_adopt = nullptr;         // gpuprobe.torch.modules._adopt: a copy's entry, or None
// Interned names, made at the first bind.
PyObject* g_key = nullptr;        // Node.metadata's key: the node's (ends, begins) lists
PyObject* g_stack_key = nullptr;  // the thread's dict's key of its stack of noted inputs
PyObject* g_grad_fn = nullptr;
PyObject* g_metadata = nullptr;
PyObject* g_register_prehook = nullptr;

// The entry of `module` in the table (a new reference: the hooks run Python — a GC's callbacks,
// a tensor subclass's attributes — that may remove it from the table), or nullptr.
PyObject* entry_of(PyObject* module) {
  if (g_ranges == nullptr) return nullptr;
  PyObject* key = PyLong_FromVoidPtr(module);
  if (key == nullptr) return nullptr;
  PyObject* entry = PyDict_GetItemWithError(g_ranges, key);
  Py_DECREF(key);
  if (entry == nullptr || !PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) return nullptr;
  Py_INCREF(entry);
  return entry;
}

// A hook's end: None, with an error it met reported as unraisable rather than raised into the
// module call — unless it is no Exception (KeyboardInterrupt, SystemExit from a signal handler
// that ran inside the hook), which goes on to the program as it would from any Python code.
PyObject* done(PyObject* hook, PyObject* entry = nullptr) {
  Py_XDECREF(entry);
  if (PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) return nullptr;
    PyErr_WriteUnraisable(hook);
  }
  Py_RETURN_NONE;
}

void drop(PyObject* result) { Py_XDECREF(result); }

bool grad_enabled() {
  PyObject* on = PyObject_CallNoArgs(g_grad_enabled);
  const bool enabled = on == Py_True;
  Py_XDECREF(on);
  return enabled;
}

// Appends to `out` the grad_fn of each tensor in `values` (a tensor, or a tuple, list or dict of
// them, one level deep, as modules take and return), each node once. False on an error.
bool grad_nodes(PyObject* values, PyObject* out) {
  PyObject* one[] = {values};
  PyObject* const* items = one;
  Py_ssize_t n = 1;
  PyObject* held = nullptr;  // a tuple of the values: a list may change under the attribute reads
  if (!PyObject_TypeCheck(values, reinterpret_cast<PyTypeObject*>(g_tensor))) {
    if (PyDict_Check(values)) {
      PyObject* listed = PyDict_Values(values);
      values = held = listed ? PyList_AsTuple(listed) : nullptr;
      Py_XDECREF(listed);
    } else if (PyList_Check(values)) {
      values = held = PyList_AsTuple(values);
    } else if (!PyTuple_Check(values)) {
      return true;
    }
    if (values == nullptr) return false;
    items = PySequence_Fast_ITEMS(values);
    n = PyTuple_GET_SIZE(values);
  }
  bool ok = true;
  for (Py_ssize_t i = 0; i < n && ok; ++i) {
    if (!PyObject_TypeCheck(items[i], reinterpret_cast<PyTypeObject*>(g_tensor))) continue;
    PyObject* node = PyObject_GetAttr(items[i], g_grad_fn);
    if (node == nullptr) {
      ok = false;
      break;
    }
    bool seen = node == Py_None;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(out) && !seen; ++j) {
      seen = PyList_GET_ITEM(out, j) == node;
    }
    if (!seen) ok = PyList_Append(out, node) == 0;
    Py_DECREF(node);
  }
  Py_XDECREF(held);
  return ok;
}

// This thread's stack of (module, its input nodes), in the thread's own dict (borrowed).
PyObject* thread_stack() {
  PyObject* dict = PyThreadState_GetDict();
  if (dict == nullptr) return nullptr;
  PyObject* stack = PyDict_GetItemWithError(dict, g_stack_key);
  if (stack != nullptr || PyErr_Occurred()) return stack;
  stack = PyList_New(0);
  if (stack == nullptr) return nullptr;
  const int set = PyDict_SetItem(dict, g_stack_key, stack);
  Py_DECREF(stack);
  return set == 0 ? stack : nullptr;
}

// The node's (ends, begins) lists (borrowed), made and hooked (one pre-hook running
// backward_ranges._run_node on them) at the node's first use.
PyObject* actions_of(PyObject* node) {
  PyObject* meta = PyObject_GetAttr(node, g_metadata);
  if (meta == nullptr) return nullptr;
  PyObject* actions = PyDict_GetItemWithError(meta, g_key);
  if (actions == nullptr && !PyErr_Occurred()) {
    PyObject* made = Py_BuildValue("([][])");
    PyObject* hook =
        made ? PyObject_CallFunctionObjArgs(g_partial, g_run_node, made, nullptr) : nullptr;
    PyObject* handle = hook ? PyObject_CallMethodOneArg(node, g_register_prehook, hook) : nullptr;
    if (handle != nullptr && PyDict_SetItem(meta, g_key, made) == 0) actions = made;
    Py_XDECREF(handle);
    Py_XDECREF(hook);
    Py_XDECREF(made);  // the metadata holds it
  }
  Py_DECREF(meta);
  return actions;
}

// Before the forward of a module with a backward range: notes its input nodes.
void note_inputs(PyObject* module, PyObject* args) {
  if (detail::gate_for(Category::kTorch) == 0 || !grad_enabled()) return;
  PyObject* stack = thread_stack();
  PyObject* nodes = stack ? PyList_New(0) : nullptr;
  if (nodes != nullptr && grad_nodes(args, nodes)) {
    PyObject* noted = PyTuple_Pack(2, module, nodes);
    if (noted != nullptr) PyList_Append(stack, noted);
    Py_XDECREF(noted);
  }
  Py_XDECREF(nodes);
}

// After it: hangs the backward range on the nodes that made its outputs (begin) and on those
// that made its inputs (end), as backward_ranges.attach does.
void attach_backward(PyObject* backward, PyObject* module, PyObject* output) {
  PyObject* stack = thread_stack();
  if (stack == nullptr) return;
  const Py_ssize_t depth = PyList_GET_SIZE(stack);
  if (depth == 0 || PyTuple_GET_ITEM(PyList_GET_ITEM(stack, depth - 1), 0) != module) return;
  PyObject* noted = PyList_GET_ITEM(stack, depth - 1);
  Py_INCREF(noted);
  if (PyList_SetSlice(stack, depth - 1, depth, nullptr) == 0 && grad_enabled()) {
    PyObject* inputs = PyTuple_GET_ITEM(noted, 1);
    PyObject* outputs = PyList_New(0);
    if (outputs != nullptr && grad_nodes(output, outputs) && PyList_GET_SIZE(outputs) > 0) {
      // This forward's: a backward range begins and ends once per forward.
      PyObject* token = PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
      PyObject* at_end = PyList_GET_SIZE(inputs) == 0 ? Py_True : Py_False;
      PyObject* begin = token ? PyTuple_Pack(3, backward, token, at_end) : nullptr;
      PyObject* end = token ? PyTuple_Pack(2, backward, token) : nullptr;
      // Later attachments on one node are outer modules (forward hooks run innermost first):
      // their begins go first.
      for (Py_ssize_t i = 0; begin && i < PyList_GET_SIZE(outputs); ++i) {
        PyObject* actions = actions_of(PyList_GET_ITEM(outputs, i));
        if (actions == nullptr || PyList_Insert(PyTuple_GET_ITEM(actions, 1), 0, begin) != 0) break;
      }
      for (Py_ssize_t i = 0; end && !PyErr_Occurred() && i < PyList_GET_SIZE(inputs); ++i) {
        PyObject* actions = actions_of(PyList_GET_ITEM(inputs, i));
        if (actions == nullptr || PyList_Append(PyTuple_GET_ITEM(actions, 0), end) != 0) break;
      }
      Py_XDECREF(end);
      Py_XDECREF(begin);
      Py_XDECREF(token);
    }
    Py_XDECREF(outputs);
  }
  Py_DECREF(noted);
}

// The entry of a module the table does not know, from gpuprobe.torch: a copy of an instrumented
// module (copy.deepcopy, DataParallel's replicas) carries the original's hooks, and is recorded
// under the original's names from its first call on; anything else gets (None, None), recorded
// never. A new reference, or nullptr.
PyObject* adopted(PyObject* module) {
  if (g_adopt == nullptr || PyErr_Occurred()) return nullptr;
  PyObject* entry = PyObject_CallOneArg(g_adopt, module);
  if (entry != nullptr && (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2)) {
    Py_DECREF(entry);
    return nullptr;
  }
  return entry;
}

PyObject* module_pre_hook(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (GPUPROBE_LIKELY(detail::g_gate.load(std::memory_order_relaxed) == 0)) Py_RETURN_NONE;
  if (nargs != 2) Py_RETURN_NONE;
  PyObject* entry = entry_of(args[0]);
  if (entry == nullptr) entry = adopted(args[0]);
  if (entry == nullptr) return done(self);
  if (PyTuple_GET_ITEM(entry, 0) == Py_None) return done(self, entry);  // not to be recorded
  PyObject* entered = range_enter(PyTuple_GET_ITEM(entry, 0), nullptr);
  if (entered == nullptr) return done(self, entry);
  Py_DECREF(entered);
  if (PyTuple_GET_ITEM(entry, 1) != Py_None && g_grad_enabled != nullptr) {
    note_inputs(args[0], args[1]);
  }
  return done(self, entry);
}

PyObject* module_post_hook(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  // The pre-hook's entry, if it made one, is open on this thread.
  if (GPUPROBE_LIKELY(!thread_has_open_ranges())) Py_RETURN_NONE;
  if (nargs != 3) Py_RETURN_NONE;
  PyObject* entry = entry_of(args[0]);
  if (entry == nullptr) return done(self);
  if (PyTuple_GET_ITEM(entry, 0) == Py_None) return done(self, entry);
  drop(range_exit(PyTuple_GET_ITEM(entry, 0), nullptr, 0));
  PyObject* backward = PyTuple_GET_ITEM(entry, 1);
  if (backward != Py_None && g_grad_enabled != nullptr) attach_backward(backward, args[0], args[2]);
  return done(self, entry);
}

PyObject* module_hooks_bind(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 6 || !PyDict_CheckExact(args[0]) || !PyCallable_Check(args[1]) ||
      !PyType_Check(args[2]) || !PyCallable_Check(args[3]) || !PyCallable_Check(args[4]) ||
      !PyCallable_Check(args[5])) {
    PyErr_SetString(PyExc_TypeError,
                    "_module_hooks_bind(ranges: dict, is_grad_enabled, Tensor, run_node, partial, "
                    "adopt)");
    return nullptr;
  }
  if (g_key == nullptr) {
    for (auto [field, text] :
         {std::pair{&g_key, "gpuprobe"}, std::pair{&g_stack_key, "gpuprobe.module_inputs"},
          std::pair{&g_grad_fn, "grad_fn"}, std::pair{&g_metadata, "metadata"},
          std::pair{&g_register_prehook, "register_prehook"}}) {
      *field = PyUnicode_InternFromString(text);
      if (*field == nullptr) return nullptr;
    }
  }
  PyObject** fields[] = {&g_ranges, &g_grad_enabled, &g_tensor, &g_run_node, &g_partial, &g_adopt};
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    Py_XSETREF(*fields[i], args[i]);
  }
  Py_RETURN_NONE;
}

// The two hooks, as they sit in an instrumented module's hook dicts. Each is bound to a str and
// named __init__, so that pickling a module with its hooks (torch.save(model), which a program
// may do while instrumented) writes getattr(that str, "__init__"): loaded anywhere, with or
// without gpuprobe, it is str.__init__ of the text — a call that accepts any arguments, returns
// None and keeps nothing, so the loaded module's forward is its own. The text says what it was.
PyMethodDef kPickledAsInert[] = {
    {"__init__", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(module_pre_hook)),
     METH_FASTCALL,
     "__init__(module, args, /)\n--\n\nThe forward pre-hook of an instrumented module "
     "(_core.module_pre_hook): enters its range while a session records. Internal to "
     "gpuprobe.torch."},
    {"__init__", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(module_post_hook)),
     METH_FASTCALL,
     "__init__(module, args, output, /)\n--\n\nThe forward hook of an instrumented module "
     "(_core.module_post_hook): exits the range its pre-hook entered. Internal to "
     "gpuprobe.torch."}};
constexpr const char* kHookNames[] = {"module_pre_hook", "module_post_hook"};
constexpr const char* kHookTexts[] = {"gpuprobe.torch.instrument's forward pre-hook",
                                      "gpuprobe.torch.instrument's forward hook"};

PyMethodDef kHooks[] = {
    {"_module_hooks_bind",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(module_hooks_bind)), METH_FASTCALL,
     "_module_hooks_bind(ranges, is_grad_enabled, Tensor, run_node, partial, adopt, /)\n--\n\n"
     "Gives the module hooks their table, {id(module): (forward range, backward range or None)}, "
     "what a backward range needs: torch.is_grad_enabled, torch.Tensor, "
     "gpuprobe.torch.backward_ranges._run_node and functools.partial, and what gives a module "
     "the table lacks its entry (gpuprobe.torch.modules._adopt)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void add_module_hooks(pybind11::module_& m) {
  for (std::size_t i = 0; i < std::size(kPickledAsInert); ++i) {
    PyObject* text = PyUnicode_FromString(kHookTexts[i]);
    if (text == nullptr) throw pybind11::error_already_set();
    PyObject* fn = PyCFunction_NewEx(&kPickledAsInert[i], text, nullptr);
    Py_DECREF(text);
    if (fn == nullptr) throw pybind11::error_already_set();
    m.add_object(kHookNames[i], pybind11::reinterpret_steal<pybind11::object>(fn));
  }
  for (PyMethodDef& def : kHooks) {
    if (def.ml_name == nullptr) break;
    PyObject* fn = PyCFunction_NewEx(&def, nullptr, m.attr("__name__").ptr());
    if (fn == nullptr) throw pybind11::error_already_set();
    m.add_object(def.ml_name, pybind11::reinterpret_steal<pybind11::object>(fn));
  }
}

}  // namespace gpuprobe::python
