// `gpuprobe.range`'s __enter__ and __exit__, bound without allocating.
//
// `with r:` looks __enter__ and __exit__ up on the type and, up to Python 3.13, binds each to
// `r` through the attribute's __get__. For a method of a C type that binds a new builtin-method
// object, allocated and tracked by the GC, and frees it after the call: two allocations, GC
// links and frees per `with`, which were most of an unrecorded range's time (3.11, timeit: a
// `with` 80 ns, binding the two methods alone 65 ns) and, in a request whose own work has pushed
// them out of the caches, a dozen more cache lines. These descriptors bind from a small free
// list: the same two objects each request, nothing for the GC. They are method descriptors to
// Python (Py_TPFLAGS_METHOD_DESCRIPTOR): `range.__enter__(r)` — contextlib.ExitStack's form —
// and a call through `r.__enter__()` skip the binding altogether, as does 3.14's `with`.
#include "range_methods.h"

#include <structmember.h>

#include <cstddef>

#include "range_type.h"

namespace gpuprobe::python {
namespace {

PyTypeObject* g_range_type = nullptr;
PyTypeObject* g_bound_type = nullptr;

// What a method does, given its range: range_type.h's functions, with the checks of a call.
using MethodImpl = PyObject* (*)(PyObject* range, PyObject* const* args, Py_ssize_t nargs,
                                 PyObject* kwnames);

PyObject* enter_impl(PyObject* range, PyObject* const*, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 0 || kwnames != nullptr) {
    PyErr_SetString(PyExc_TypeError, "range.__enter__() takes no arguments");
    return nullptr;
  }
  return range_enter(range, nullptr);
}

PyObject* exit_impl(PyObject* range, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (kwnames != nullptr) {
    PyErr_SetString(PyExc_TypeError, "range.__exit__() takes no keyword arguments");
    return nullptr;
  }
  return range_exit(range, args, nargs);
}

// A method bound to a range: `r.__enter__` / `r.__exit__` as the `with` statement gets them.
struct BoundMethod {
  PyObject_HEAD vectorcallfunc vectorcall;
  const char* name;
  PyObject* range;  // owned; a range references no bound method, so no cycle can form
};

template <MethodImpl kImpl>
[[gnu::hot]] PyObject* call_bound(PyObject* obj, PyObject* const* args, std::size_t nargsf,
                                  PyObject* kwnames) {
  return kImpl(reinterpret_cast<BoundMethod*>(obj)->range, args, PyVectorcall_NARGS(nargsf),
               kwnames);
}

// Freed bound methods, kept for the next `with`: a `with` binds two and frees both before the
// next, so two would do; a few more serve nested ranges. Read and written under the GIL.
constexpr std::size_t kFreeBound = 16;
BoundMethod* g_free_bound[kFreeBound];
std::size_t g_free_bound_count = 0;

[[gnu::hot]] void bound_dealloc(PyObject* obj) {
  auto* self = reinterpret_cast<BoundMethod*>(obj);
  PyTypeObject* type = Py_TYPE(obj);
  Py_CLEAR(self->range);  // a range's deallocation runs no Python code (a str's, at most)
  if (g_free_bound_count < kFreeBound) {
    g_free_bound[g_free_bound_count++] = self;
  } else {
    PyObject_Free(obj);
  }
  Py_DECREF(type);  // an instance of a heap type holds a reference to it; PyObject_Init takes one
}

PyObject* bound_repr(PyObject* obj) {
  const auto* self = reinterpret_cast<const BoundMethod*>(obj);
  return PyUnicode_FromFormat("<bound method range.%s of %R>", self->name, self->range);
}

PyMemberDef kBoundMembers[] = {
    {"__vectorcalloffset__", T_PYSSIZET, static_cast<Py_ssize_t>(offsetof(BoundMethod, vectorcall)),
     READONLY, nullptr},
    {"__self__", T_OBJECT, static_cast<Py_ssize_t>(offsetof(BoundMethod, range)), READONLY,
     "The range this method is bound to."},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot kBoundSlots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(bound_dealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(bound_repr)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_members, kBoundMembers},
    {Py_tp_doc, const_cast<char*>("A gpuprobe.range's __enter__ or __exit__, bound to it.")},
    {0, nullptr}};

PyType_Spec kBoundSpec = {"gpuprobe.range_method", sizeof(BoundMethod), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL, kBoundSlots};

// `range.__enter__` / `range.__exit__` in the type's dictionary.
struct MethodDescriptor {
  PyObject_HEAD vectorcallfunc vectorcall;  // the unbound call: (range, *args)
  vectorcallfunc bound_call;                // what its bound methods run
  MethodImpl impl;
  const char* name;
  const char* doc;
};

PyObject* bind(const MethodDescriptor& descr, PyObject* range) {
  BoundMethod* bound = nullptr;
  if (g_free_bound_count > 0) {
    bound = g_free_bound[--g_free_bound_count];
    PyObject_Init(reinterpret_cast<PyObject*>(bound), g_bound_type);
  } else {
    bound = PyObject_New(BoundMethod, g_bound_type);
    if (bound == nullptr) return nullptr;
  }
  bound->vectorcall = descr.bound_call;
  bound->name = descr.name;
  Py_INCREF(range);
  bound->range = range;
  return reinterpret_cast<PyObject*>(bound);
}

[[gnu::cold]] PyObject* not_a_range(const MethodDescriptor& descr, PyObject* obj) {
  PyErr_Format(PyExc_TypeError, "range.%s needs a gpuprobe.range, not '%s'", descr.name,
               obj != nullptr ? Py_TYPE(obj)->tp_name : "nothing");
  return nullptr;
}

// Through the type (`gpuprobe.range.__enter__`) the descriptor itself; through a range, bound.
[[gnu::hot]] PyObject* descriptor_get(PyObject* obj, PyObject* instance, PyObject*) {
  const auto& descr = *reinterpret_cast<const MethodDescriptor*>(obj);
  if (instance == nullptr) {
    Py_INCREF(obj);
    return obj;
  }
  if (Py_TYPE(instance) != g_range_type) return not_a_range(descr, instance);
  return bind(descr, instance);
}

PyObject* call_unbound(PyObject* obj, PyObject* const* args, std::size_t nargsf,
                       PyObject* kwnames) {
  const auto& descr = *reinterpret_cast<const MethodDescriptor*>(obj);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs < 1 || Py_TYPE(args[0]) != g_range_type) {
    return not_a_range(descr, nargs < 1 ? nullptr : args[0]);
  }
  return descr.impl(args[0], args + 1, nargs - 1, kwnames);
}

PyObject* descriptor_repr(PyObject* obj) {
  return PyUnicode_FromFormat("<method '%s' of 'gpuprobe.range' objects>",
                              reinterpret_cast<const MethodDescriptor*>(obj)->name);
}

PyObject* descriptor_name(PyObject* obj, void*) {
  return PyUnicode_FromString(reinterpret_cast<const MethodDescriptor*>(obj)->name);
}

PyObject* descriptor_doc(PyObject* obj, void*) {
  return PyUnicode_FromString(reinterpret_cast<const MethodDescriptor*>(obj)->doc);
}

PyGetSetDef kDescriptorGetSet[] = {{"__name__", descriptor_name, nullptr, nullptr, nullptr},
                                   {"__doc__", descriptor_doc, nullptr, nullptr, nullptr},
                                   {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMemberDef kDescriptorMembers[] = {
    {"__vectorcalloffset__", T_PYSSIZET,
     static_cast<Py_ssize_t>(offsetof(MethodDescriptor, vectorcall)), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot kDescriptorSlots[] = {{Py_tp_descr_get, reinterpret_cast<void*>(descriptor_get)},
                                  {Py_tp_repr, reinterpret_cast<void*>(descriptor_repr)},
                                  {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
                                  {Py_tp_getset, kDescriptorGetSet},
                                  {Py_tp_members, kDescriptorMembers},
                                  {0, nullptr}};

PyType_Spec kDescriptorSpec = {
    "gpuprobe.range_method_descriptor", sizeof(MethodDescriptor), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    kDescriptorSlots};

// Puts a descriptor for one method into the range type's dictionary.
bool add_method(PyTypeObject* descriptor_type, const char* name, MethodImpl impl,
                vectorcallfunc bound_call, const char* doc) {
  auto* descr = PyObject_New(MethodDescriptor, descriptor_type);
  if (descr == nullptr) return false;
  descr->vectorcall = call_unbound;
  descr->bound_call = bound_call;
  descr->impl = impl;
  descr->name = name;
  descr->doc = doc;
  const int set = PyObject_SetAttrString(reinterpret_cast<PyObject*>(g_range_type), name,
                                         reinterpret_cast<PyObject*>(descr));
  Py_DECREF(descr);
  return set == 0;
}

}  // namespace

bool add_range_methods(PyObject* range_type) {
  g_range_type = reinterpret_cast<PyTypeObject*>(range_type);
  g_bound_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&kBoundSpec));
  auto* descriptor_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&kDescriptorSpec));
  // Both types live as long as the module: the range type and its bound methods use them.
  return g_bound_type != nullptr && descriptor_type != nullptr &&
         add_method(descriptor_type, "__enter__", enter_impl, call_bound<enter_impl>,
                    "Opens the range; returns it.") &&
         add_method(descriptor_type, "__exit__", exit_impl, call_bound<exit_impl>,
                    "Closes the range and records it; returns False (exceptions propagate).");
}

}  // namespace gpuprobe::python
