// Every run of an Inductor-compiled graph as a range, at the cost of the range alone.
//
// gpuprobe.torch.watch_compile() replaces CompiledFxGraph.__call__ for as long as it watches.
// A Python wrapper cost a serving request on the H200 1.9 µs with nothing recorded
// (bench/python/always_on_parts.py): its frame, an attribute read and a tuple unpacked, each
// touching memory that the request's own work had pushed out of the caches. This type does the
// common case — a graph whose frame met no graph break, already run once — in C: the range's
// entry, the call, the range's exit. Anything else (a graph's first run, graphs before or after
// a break, whose runs also time the eager code between them) goes to the Python wrapper.
//
// It also ends the span of a compiled call's dispatch: `compiled_call_entry` wraps Dynamo's
// _maybe_set_eval_frame, which torch.compile's wrapper calls with Dynamo's callback just before it
// calls the function, and notes the time; the call's first forward graph ends the span, recorded
// as "dynamo guards: [frame] function" (category compile): Dynamo's cache lookup (the guards, and
// the decision to recompile) and the frame's code before its graph.
#include "graph_runs.h"

#include <structmember.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "formats/framework_events.h"
#include "gpuprobe/detail/gate.hpp"
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
  // A frame's first forward graph: the name its runs end a compiled call's dispatch as ("dynamo
  // guards: ...", a str, owned), and its site in the session `guards_epoch` (a session's name
  // table frees the names the next one does not intern again: interned anew per session).
  PyObject* guards_name = nullptr;
  const CallSite* guards = nullptr;
  std::uint32_t guards_epoch = 0;
  std::uint64_t generation = 0;
};

// When this thread's compiled call turned Dynamo on (ticks of the session's clock, under the
// gate then open), until its first forward graph runs; ticks 0: none.
struct CallStart {
  std::uint64_t ticks = 0, gate = 0;
};
thread_local CallStart t_call_start;
// Whether a watcher records compiled calls' dispatch (watch_compile(guards=True) installed
// compiled_call_entry), and spans shorter than what are not recorded (guards_min_us=...).
bool g_guards_on = false;
std::uint64_t g_guards_min_ns = 0;
std::uint64_t g_guards_min_ticks = 0, g_guards_min_gate = 0;  // g_guards_min_ns for that gate

// Ends this thread's compiled call's dispatch at its first forward graph, recorded as `guards`
// (nullptr: forgotten, as at a graph's first run, which follows its compile).
void end_call_start(const CallSite* guards) noexcept {
  const CallStart start = t_call_start;
  if (start.ticks == 0) return;
  t_call_start = CallStart{};
  const std::uint64_t gate = detail::gate_for(Category::kCompile);
  if (guards == nullptr || !g_guards_on || gate == 0 || gate != start.gate) return;
  const std::uint64_t now = detail::now_ticks(gate);
  if (gate != g_guards_min_gate) {
    g_guards_min_ticks = detail::ticks_in(gate, g_guards_min_ns);
    g_guards_min_gate = gate;
  }
  if (now < start.ticks || now - start.ticks < g_guards_min_ticks) return;
  detail::emit(gate, detail::RecordKind::kRange, guards, start.ticks, now);
}

// The site of a guards name (a str) in the current session, or nullptr.
const CallSite* intern_guards(PyObject* name) {
  Py_ssize_t size = 0;
  const char* text =
      name != nullptr && PyUnicode_Check(name) ? PyUnicode_AsUTF8AndSize(name, &size) : nullptr;
  if (text == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  const CallSite* site = detail::intern(std::string_view(text, size), Category::kCompile);
  return site != detail::name_table_full_site() ? site : nullptr;  // never keep the full table's
}

// A run tuple's guards name (its fifth item, a str; borrowed), or nullptr.
PyObject* guards_name_of(PyObject* run) {
  if (!PyTuple_Check(run) || PyTuple_GET_SIZE(run) < 5) return nullptr;
  PyObject* name = PyTuple_GET_ITEM(run, 4);
  return PyUnicode_Check(name) ? name : nullptr;
}
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
  for (const RememberedGraph& r : self->remembered) {
    Py_VISIT(r.weak);
    Py_VISIT(r.guards_name);
  }
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
    Py_CLEAR(r.guards_name);
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
// after it (the tuple the Python wrapper keeps on the graph: frame, resume, breaks, backward,
// guards name), else nullptr; `*guards`, the name its runs end a compiled call's dispatch as (a
// new reference, or nullptr).
PyObject* fast_range(const GraphRunsObject* self, PyObject* graph, PyObject** guards) {
  PyObject* run = PyObject_GetAttr(graph, self->run_attr);
  if (run == nullptr) {
    PyErr_Clear();  // not run yet, or a graph that cannot keep attributes
    return nullptr;
  }
  PyObject* range = nullptr;
  if (PyTuple_Check(run) && PyTuple_GET_SIZE(run) >= 4 && PyTuple_GET_ITEM(run, 1) == Py_False &&
      PyTuple_GET_ITEM(run, 2) == Py_False) {
    range = PyTuple_GET_ITEM(run, 3) == Py_True ? self->backward : self->forward;
    *guards = range == self->forward ? guards_name_of(run) : nullptr;
    Py_XINCREF(*guards);
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
[[gnu::cold, gnu::noinline]] void remember(GraphRunsObject* self, PyObject* graph, PyObject* range,
                                           PyObject* guards) {
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
  PyObject* replaced_name = slot->guards_name;
  Py_XINCREF(guards);
  *slot = RememberedGraph{graph, weak, range, guards, nullptr, 0, g_runs_generation};
  Py_XDECREF(replaced);       // a weak reference without a callback: runs no Python code
  Py_XDECREF(replaced_name);  // a str
}

// The slot `graph`'s runs were remembered in, or nullptr.
RememberedGraph* remembered(GraphRunsObject* self, const PyObject* graph) {
  RememberedGraph* r = slot_of(self, graph);
  return r != nullptr && r->generation == g_runs_generation && PyWeakref_GetObject(r->weak) == graph
             ? r
             : nullptr;
}

// The site a remembered graph's runs end a compiled call's dispatch as, in the session of the
// call's start; nullptr for none.
[[gnu::noinline]] const CallSite* guards_of(RememberedGraph* r) {
  const std::uint32_t epoch = detail::epoch_of(t_call_start.gate);
  if (r->guards_name != nullptr && (r->guards == nullptr || r->guards_epoch != epoch)) {
    r->guards = intern_guards(r->guards_name);
    r->guards_epoch = epoch;
  }
  return r->guards;
}

// A run of a graph not remembered: its attribute read (and the graph remembered when its runs
// take the fast path), or the Python wrapper's run. Cold: a graph's first runs.
[[gnu::cold, gnu::noinline]] PyObject* unremembered_run(GraphRunsObject* self,
                                                        PyObject* const* args, std::size_t nargsf) {
  PyObject* guards = nullptr;
  PyObject* range = fast_range(self, args[0], &guards);
  if (range == nullptr) return PyObject_Vectorcall(self->slow, args, nargsf, nullptr);
  remember(self, args[0], range, guards);
  if (t_call_start.ticks != 0 && range == self->forward) end_call_start(intern_guards(guards));
  Py_XDECREF(guards);
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
  RememberedGraph* r = remembered(self, args[0]);
  if (r == nullptr) return unremembered_run(self, args, nargsf);
  if (t_call_start.ticks != 0 && r->range == self->forward) end_call_start(guards_of(r));
  return run_in(self, r->range, args, nargsf);
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

// compiled_call_entry(original): Dynamo's _maybe_set_eval_frame(callback), noting when a callback
// (not None) turns Dynamo on: the start of a compiled call's dispatch. None forgets it (the call
// is over, or Dynamo is turned off).
struct CallEntryObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* original;
};

PyObject* call_entry_vectorcall(PyObject* obj, PyObject* const* args, std::size_t nargsf,
                                PyObject* kwnames) {
  auto* self = reinterpret_cast<CallEntryObject*>(obj);
  if (PyVectorcall_NARGS(nargsf) == 1 && kwnames == nullptr) {
    const std::uint64_t gate = args[0] != Py_None ? detail::gate_for(Category::kCompile) : 0;
    t_call_start = gate != 0 ? CallStart{detail::now_ticks(gate), gate} : CallStart{};
  }
  return PyObject_Vectorcall(self->original, args, nargsf, kwnames);
}

PyObject* call_entry_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* kKeywords[] = {"original", nullptr};
  PyObject* original = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:compiled_call_entry",
                                   const_cast<char**>(kKeywords), &original)) {
    return nullptr;
  }
  if (!PyCallable_Check(original)) {
    PyErr_SetString(PyExc_TypeError, "compiled_call_entry(original): a callable");
    return nullptr;
  }
  auto* self = reinterpret_cast<CallEntryObject*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  Py_INCREF(original);
  self->original = original;
  self->vectorcall = call_entry_vectorcall;
  return reinterpret_cast<PyObject*>(self);
}

int call_entry_traverse(PyObject* obj, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(obj));
  Py_VISIT(reinterpret_cast<CallEntryObject*>(obj)->original);
  return 0;
}

int call_entry_clear(PyObject* obj) {
  Py_CLEAR(reinterpret_cast<CallEntryObject*>(obj)->original);
  return 0;
}

void call_entry_dealloc(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  PyObject_GC_UnTrack(obj);
  call_entry_clear(obj);
  type->tp_free(obj);
  Py_DECREF(type);
}

PyObject* call_entry_original(PyObject* obj, void*) {
  PyObject* original = reinterpret_cast<CallEntryObject*>(obj)->original;
  Py_INCREF(original);
  return original;
}

PyMemberDef kCallEntryMembers[] = {
    {"__vectorcalloffset__", T_PYSSIZET,
     static_cast<Py_ssize_t>(offsetof(CallEntryObject, vectorcall)), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef kCallEntryGetSet[] = {
    {"__wrapped__", call_entry_original, nullptr, const_cast<char*>("torch's function"), nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kCallEntrySlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(call_entry_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(call_entry_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(call_entry_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(call_entry_clear)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_members, kCallEntryMembers},
    {Py_tp_getset, kCallEntryGetSet},
    {Py_tp_doc,
     const_cast<char*>("compiled_call_entry(original): Dynamo's _maybe_set_eval_frame, noting "
                       "when a compiled call turns Dynamo on; its first forward graph's run "
                       "records the span as \"dynamo guards: ...\". Internal to gpuprobe.torch.")},
    {0, nullptr}};

PyType_Spec kCallEntrySpec = {"gpuprobe._core.compiled_call_entry", sizeof(CallEntryObject), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
                              kCallEntrySlots};

}  // namespace

void add_graph_runs(pybind11::module_& m, PyObject* range_type) {
  g_range_type = reinterpret_cast<PyTypeObject*>(range_type);
  PyObject* type = PyType_FromSpec(&kGraphRunsSpec);
  if (type == nullptr) throw pybind11::error_already_set();
  m.add_object("graph_runs", pybind11::reinterpret_steal<pybind11::object>(type));
  PyObject* entry = PyType_FromSpec(&kCallEntrySpec);
  if (entry == nullptr) throw pybind11::error_already_set();
  m.add_object("compiled_call_entry", pybind11::reinterpret_steal<pybind11::object>(entry));
  m.def(
      "_compiled_call_graph",
      [](pybind11::object guards) {
        const CallSite* site = nullptr;
        if (!guards.is_none()) {
          const std::string name = pybind11::str(guards);
          site = detail::intern(name, Category::kCompile);
        }
        end_call_start(site);
      },
      pybind11::arg("guards"),
      "A compiled call's first forward graph runs (the Python path): its dispatch since "
      "compiled_call_entry noted it is recorded as the range `guards`, or forgotten with None.");
  m.def(
      "_set_guards",
      [](bool on, std::uint64_t min_ns) {
        g_guards_on = on;
        g_guards_min_ns = min_ns;
        g_guards_min_gate = 0;
        t_call_start = CallStart{};
      },
      pybind11::arg("on"), pybind11::arg("min_ns"),
      "Whether compiled calls' dispatch is recorded (compiled_call_entry installed), and spans "
      "shorter than min_ns are not.");
  m.def(
      "_graph_runs_changed", [] { ++g_runs_generation; },
      "A graph's '_gpuprobe_run' was taken away: every graph_runs forgets the graphs it "
      "remembered and reads the attribute again.");
}

}  // namespace gpuprobe::python
