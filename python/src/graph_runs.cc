// Every run of an Inductor-compiled graph as a range, at the cost of the range alone.
//
// gpuprobe.torch.watch_compile() replaces CompiledFxGraph.__call__ for as long as it watches.
// A Python wrapper cost a serving request on the H200 1.9 µs with nothing recorded
// (bench/python/always_on_parts.py): its frame, an attribute read and a tuple unpacked, each
// touching memory that the request's own work had pushed out of the caches. This type does the
// common case — a graph whose frame met no graph break, already run once — in C: the range's
// entry, the call, the range's exit. Anything else (a graph's first run, graphs before or after
// a break, whose runs also time the eager code between them) goes to the Python wrapper.
#include "graph_runs.h"

#include <structmember.h>

#include <cstddef>
#include <utility>

#include "range_type.h"

namespace gpuprobe::python {
namespace {

PyTypeObject* g_range_type = nullptr;  // gpuprobe.range, which forward and backward must be

// Bumped by _graph_runs_changed() when a graph's "_gpuprobe_run" is taken away (the Python side
// does, when a graph is made ready to run again): every graph's remembered range is then stale.
std::uint64_t g_runs_generation = 0;

// A graph seen lately whose runs take the fast path, and the range they are recorded in: a
// serving loop runs the same graph object each request, and reading the graph's attribute (type
// lookup, instance dictionary, the tuple) is most of what this wrapper costs once the request's
// own work has pushed those lines out of the caches. `graph` is only compared; the weak reference
// says whether it is still that object (an address can be reused once a graph is gone).
struct RememberedGraph {
  const PyObject* graph = nullptr;
  PyObject* weak = nullptr;   // a weak reference to it, owned
  PyObject* range = nullptr;  // forward or backward, owned by the GraphRunsObject
  std::uint64_t generation = 0;
};
// A training step runs a forward and a backward graph; a few more for models compiled in parts.
constexpr std::size_t kRemembered = 4;

struct GraphRunsObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* original;  // torch's CompiledFxGraph.__call__
  PyObject* slow;      // the Python wrapper: slow(graph, inputs)
  PyObject* forward;   // gpuprobe.range "compiled graph (forward)"
  PyObject* backward;  // gpuprobe.range "compiled graph (backward)"
  PyObject* run_attr;  // "_gpuprobe_run": what the Python wrapper worked out at the first run
  RememberedGraph remembered[kRemembered];
  std::size_t next_replaced;
};

PyObject* graph_runs_vectorcall(PyObject* obj, PyObject* const* args, std::size_t nargsf,
                                PyObject* kwnames);

PyObject* graph_runs_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* kKeywords[] = {"original", "slow", "forward", "backward", nullptr};
  PyObject *original = nullptr, *slow = nullptr, *forward = nullptr, *backward = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO:graph_runs", const_cast<char**>(kKeywords),
                                   &original, &slow, &forward, &backward)) {
    return nullptr;
  }
  if (!PyCallable_Check(original) || !PyCallable_Check(slow) || Py_TYPE(forward) != g_range_type ||
      Py_TYPE(backward) != g_range_type) {
    PyErr_SetString(PyExc_TypeError,
                    "graph_runs(original, slow, forward, backward): two callables, two ranges");
    return nullptr;
  }
  auto* self = reinterpret_cast<GraphRunsObject*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->run_attr = PyUnicode_InternFromString("_gpuprobe_run");
  if (self->run_attr == nullptr) {
    Py_DECREF(self);
    return nullptr;
  }
  for (auto [field, value] :
       {std::pair{&self->original, original}, std::pair{&self->slow, slow},
        std::pair{&self->forward, forward}, std::pair{&self->backward, backward}}) {
    Py_INCREF(value);
    *field = value;
  }
  self->vectorcall = graph_runs_vectorcall;
  return reinterpret_cast<PyObject*>(self);
}

int graph_runs_traverse(PyObject* obj, visitproc visit, void* arg) {
  auto* self = reinterpret_cast<GraphRunsObject*>(obj);
  Py_VISIT(Py_TYPE(obj));
  Py_VISIT(self->original);
  Py_VISIT(self->slow);
  Py_VISIT(self->forward);
  Py_VISIT(self->backward);
  for (const RememberedGraph& r : self->remembered) Py_VISIT(r.weak);
  return 0;
}

int graph_runs_clear(PyObject* obj) {
  auto* self = reinterpret_cast<GraphRunsObject*>(obj);
  Py_CLEAR(self->original);
  Py_CLEAR(self->slow);
  Py_CLEAR(self->forward);
  Py_CLEAR(self->backward);
  Py_CLEAR(self->run_attr);
  for (RememberedGraph& r : self->remembered) {
    Py_CLEAR(r.weak);
    r = RememberedGraph{};
  }
  return 0;
}

void graph_runs_dealloc(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  PyObject_GC_UnTrack(obj);
  graph_runs_clear(obj);
  type->tp_free(obj);
  Py_DECREF(type);
}

// The range a graph's runs are recorded in when its first run found no graph break before or
// after it (the tuple the Python wrapper keeps on the graph: frame, resume, breaks, backward),
// else nullptr.
PyObject* fast_range(const GraphRunsObject* self, PyObject* graph) {
  PyObject* run = PyObject_GetAttr(graph, self->run_attr);
  if (run == nullptr) {
    PyErr_Clear();  // not run yet, or a graph that cannot keep attributes
    return nullptr;
  }
  PyObject* range = nullptr;
  if (PyTuple_Check(run) && PyTuple_GET_SIZE(run) == 4 && PyTuple_GET_ITEM(run, 1) == Py_False &&
      PyTuple_GET_ITEM(run, 2) == Py_False) {
    range = PyTuple_GET_ITEM(run, 3) == Py_True ? self->backward : self->forward;
  }
  Py_DECREF(run);
  return range;
}

// torch's call inside `range`.
inline PyObject* run_in(GraphRunsObject* self, PyObject* range, PyObject* const* args,
                        std::size_t nargsf) {
  PyObject* entered = range_enter(range, nullptr);
  if (entered == nullptr) return nullptr;
  Py_DECREF(entered);
  PyObject* result = PyObject_Vectorcall(self->original, args, nargsf, nullptr);
  Py_XDECREF(range_exit(range, nullptr, 0));
  return result;
}

// The slot that names `graph`'s address, or nullptr. remember() keeps one slot per address.
RememberedGraph* slot_of(GraphRunsObject* self, const PyObject* graph) {
  for (RememberedGraph& r : self->remembered) {
    if (r.graph == graph) return &r;
  }
  return nullptr;
}

// Remembers that `graph` runs inside `range`: in the slot that named the same address (a graph
// now gone, or a generation ago), else in the one used longest ago. Cold: once per graph (and
// generation), unless more graphs than kRemembered alternate.
[[gnu::cold, gnu::noinline]] void remember(GraphRunsObject* self, PyObject* graph,
                                           PyObject* range) {
  PyObject* weak = PyWeakref_NewRef(graph, nullptr);
  if (weak == nullptr) {
    PyErr_Clear();  // a graph that takes no weak references: its attribute is read each run
    return;
  }
  RememberedGraph* slot = slot_of(self, graph);
  if (slot == nullptr) {
    slot = &self->remembered[self->next_replaced];
    self->next_replaced = (self->next_replaced + 1) % kRemembered;
  }
  PyObject* replaced = slot->weak;
  *slot = RememberedGraph{graph, weak, range, g_runs_generation};
  Py_XDECREF(replaced);  // a weak reference without a callback: runs no Python code
}

// The range `graph`'s runs were remembered in, or nullptr.
PyObject* remembered_range(GraphRunsObject* self, const PyObject* graph) {
  const RememberedGraph* r = slot_of(self, graph);
  return r != nullptr && r->generation == g_runs_generation && PyWeakref_GetObject(r->weak) == graph
             ? r->range
             : nullptr;
}

// A run of a graph not remembered: its attribute read (and the graph remembered when its runs
// take the fast path), or the Python wrapper's run. Cold: a graph's first runs.
[[gnu::cold, gnu::noinline]] PyObject* unremembered_run(GraphRunsObject* self,
                                                        PyObject* const* args, std::size_t nargsf) {
  PyObject* range = fast_range(self, args[0]);
  if (range == nullptr) return PyObject_Vectorcall(self->slow, args, nargsf, nullptr);
  remember(self, args[0], range);
  return run_in(self, range, args, nargsf);
}

// graph_runs(graph, inputs), as CompiledFxGraph.__call__: unbound (the type is a method
// descriptor, so Python passes the graph as the first argument without binding a method).
[[gnu::hot]] PyObject* graph_runs_vectorcall(PyObject* obj, PyObject* const* args,
                                             std::size_t nargsf, PyObject* kwnames) {
  auto* self = reinterpret_cast<GraphRunsObject*>(obj);
  if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != nullptr) {
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
  }
  PyObject* range = remembered_range(self, args[0]);
  if (range == nullptr) return unremembered_run(self, args, nargsf);
  return run_in(self, range, args, nargsf);
}

// Read through the class (CompiledFxGraph.__call__) it is itself; through an instance, bound.
PyObject* graph_runs_get(PyObject* obj, PyObject* instance, PyObject*) {
  if (instance == nullptr || instance == Py_None) {
    Py_INCREF(obj);
    return obj;
  }
  return PyMethod_New(obj, instance);
}

PyMemberDef kGraphRunsMembers[] = {
    {"__vectorcalloffset__", T_PYSSIZET,
     static_cast<Py_ssize_t>(offsetof(GraphRunsObject, vectorcall)), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot kGraphRunsSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(graph_runs_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(graph_runs_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(graph_runs_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(graph_runs_clear)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_descr_get, reinterpret_cast<void*>(graph_runs_get)},
    {Py_tp_members, kGraphRunsMembers},
    {Py_tp_doc,
     const_cast<char*>("graph_runs(original, slow, forward, backward): Inductor's "
                       "CompiledFxGraph.__call__ with each run inside the range `forward` or "
                       "`backward`; a graph's first run, and graphs next to a graph break, go to "
                       "slow(graph, inputs). Internal to gpuprobe.torch.")},
    {0, nullptr}};

PyType_Spec kGraphRunsSpec = {"gpuprobe._core.graph_runs", sizeof(GraphRunsObject), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                                  Py_TPFLAGS_METHOD_DESCRIPTOR,
                              kGraphRunsSlots};

}  // namespace

void add_graph_runs(pybind11::module_& m, PyObject* range_type) {
  g_range_type = reinterpret_cast<PyTypeObject*>(range_type);
  PyObject* type = PyType_FromSpec(&kGraphRunsSpec);
  if (type == nullptr) throw pybind11::error_already_set();
  m.add_object("graph_runs", pybind11::reinterpret_steal<pybind11::object>(type));
  m.def(
      "_graph_runs_changed", [] { ++g_runs_generation; },
      "A graph's '_gpuprobe_run' was taken away: every graph_runs forgets the graphs it "
      "remembered and reads the attribute again.");
}

}  // namespace gpuprobe::python
