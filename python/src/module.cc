// `gpuprobe._core`: the C++ library for Python. Sessions, instants, counters and steps through
// pybind11; the range type, which Python code enters and exits at high rates, written against
// the CPython API directly so that a `with gpuprobe.range("x"):` costs a few hundred
// nanoseconds, not microseconds.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "asyncio_tracks.h"
#include "formats/category_names.h"
#include "formats/framework_events.h"
#include "gpuprobe/gpuprobe.hpp"
#include "graph_runs.h"
#include "module_hooks.h"
#include "open_stack.h"
#include "range_methods.h"
#include "range_type.h"
#include "session_binding.h"
#include "thread_names.h"

namespace py = pybind11;

namespace gpuprobe::python {
namespace {

namespace fe = formats::framework_events;

thread_local OpenStack t_open;

// This thread's t_open, its address computed once: GCC otherwise computes a TLS address again
// (a __tls_get_addr call in a module loaded by dlopen) at each use rather than keep it in a
// register; the empty asm hides where the pointer came from, so it is kept.
inline OpenStack& this_threads_open() {
  OpenStack* open = &t_open;
  asm("" : "+r"(open));
  return *open;
}

// The heap storage of a thread whose ranges nested deeper than kInlineOpen. Its destructor, at
// the thread's end, forgets what was open (nothing records after the thread's own end).
struct OpenSpill {
  std::vector<OpenRange> items;
  ~OpenSpill() { t_open = OpenStack{}; }
};
thread_local OpenSpill t_open_spill;

}  // namespace

void OpenStack::grow() {
  std::vector<OpenRange>& items = t_open_spill.items;
  if (heap == nullptr) items.assign(inline_items, inline_items + size);
  items.resize(2 * capacity());
  heap = items.data();
  ++capacity_shift;
}

namespace {
thread_local std::uint64_t t_next_id = 1;

// Names this thread as `threading` does (thread_names.h), once per session: before the first
// event a session records through this module on the thread. `gate`: the gate the event passed.
inline void named_for(OpenStack& open, std::uint64_t gate) {
  const std::uint32_t epoch = detail::epoch_of(gate);
  if (GPUPROBE_LIKELY(open.named_epoch == epoch)) return;
  open.named_epoch = epoch;
  name_thread_from_threading();
}

// The same for events of any category (instants, counters, ranges at given times): named while
// a session records.
void named_now() {
  if (const std::uint64_t gate = detail::g_gate.load(std::memory_order_relaxed); gate != 0)
    named_for(this_threads_open(), gate);
}

// Ends open[i], and first the hook ranges above it (opened inside it and abandoned); ranges of
// other owners above it stay open.
void end_open(OpenStack& open, std::size_t i) {
  for (std::size_t j = open.size; j-- > i + 1;) {
    if (open[j].owner == nullptr) {
      open[j].range.end();
      open.erase(j);
    }
  }
  open[i].range.end();
  open.erase(i);
}

// A category by its built-in name (formats/category_names.h): "app", ..., "user0".."user7".
std::optional<Category> category_from(std::string_view name) {
  for (unsigned i = 0; i < 32; ++i) {
    const auto category = static_cast<Category>(i);
    if (formats::category_exists(category) && formats::default_category_name(category) == name)
      return category;
  }
  return std::nullopt;
}

// ---- ranges begun and ended by callbacks (module hooks) ----

// _end(token) ends the range _begin() returned `token` for, and first the hook ranges opened
// after it and never ended (a forward that raised skips its post-hook).
void end_range(std::uint64_t token) {
  for (std::size_t i = t_open.size; i-- > 0;) {
    if (t_open[i].owner == nullptr && t_open[i].id == token) return end_open(t_open, i);
  }
}

// ---- the Range type (CPython API) ----

}  // namespace

struct RangeObject {
  PyObject_HEAD PyObject* name;  // str
  Category category;
  // The name's interned site, and the session (epoch) it was interned in (see site_for).
  const CallSite* site;
  std::uint32_t site_epoch;  // 0: none yet (epochs start at 1)
};

namespace {

PyObject* range_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* kKeywords[] = {"name", "category", nullptr};
  PyObject* name = nullptr;
  const char* category = "python";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|s:range", const_cast<char**>(kKeywords), &name,
                                   &category)) {
    return nullptr;
  }
  const std::optional<Category> c = category_from(category);
  if (!c) {
    PyErr_Format(PyExc_ValueError,
                 "unknown gpuprobe category '%s' (app, step, python, torch, compile, gc, alloc, "
                 "cuda, user0..user7)",
                 category);
    return nullptr;
  }
  auto* self = reinterpret_cast<RangeObject*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  Py_INCREF(name);
  self->name = name;
  self->category = *c;
  return reinterpret_cast<PyObject*>(self);
}

// The objects `gpuprobe.range("name")` built lately, by the name's str object. A serving loop
// builds its request's range anew each time (`with gpuprobe.range("request"):`) from the same
// constant str; it gets the same object back: no allocation, and the site the object kept
// (site_for) instead of the name's lookup — the coldest parts of a range entered once per
// request. A range object is immutable to Python and keeps no per-thread state, so one object
// serves every caller, as a decorated function's does. Each slot holds a reference to its object,
// which holds its name, so no other string can take the address while the slot names it. Read
// and written under the GIL.
constexpr std::size_t kCachedRanges = 64;
RangeObject* g_cached_ranges[kCachedRanges];

RangeObject*& cached_range_slot(const PyObject* name) {
  // Python objects are 16-byte aligned: the bits above those pick the slot.
  return g_cached_ranges[(reinterpret_cast<std::uintptr_t>(name) >> 4) % kCachedRanges];
}

// A new range object for `name`, kept in its cache slot. Cold: the first range of a name (and
// of a name whose slot another name took since).
[[gnu::cold, gnu::noinline]] PyObject* new_cached_range(PyTypeObject* range_type, PyObject* name) {
  auto* self = reinterpret_cast<RangeObject*>(range_type->tp_alloc(range_type, 0));
  if (self == nullptr) return nullptr;
  Py_INCREF(name);
  self->name = name;
  self->category = Category::kPython;
  RangeObject*& cached = cached_range_slot(name);
  Py_INCREF(self);
  RangeObject* replaced = cached;
  cached = self;
  Py_XDECREF(replaced);  // its deallocation runs no Python code (a str's, at most)
  return reinterpret_cast<PyObject*>(self);
}

// Any other form of the call (a category, keywords): built through range_new. Cold.
[[gnu::cold, gnu::noinline]] PyObject* range_from_arguments(PyTypeObject* range_type,
                                                            PyObject* const* args, Py_ssize_t nargs,
                                                            PyObject* kwnames) {
  PyObject* positional = PyTuple_New(nargs);
  if (positional == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(positional, i, args[i]);
  }
  PyObject* keywords = nullptr;
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nkw > 0 && (keywords = PyDict_New()) != nullptr) {
    for (Py_ssize_t i = 0; i < nkw; ++i) {
      if (PyDict_SetItem(keywords, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) {
        Py_CLEAR(keywords);
        break;
      }
    }
  }
  PyObject* self =
      nkw > 0 && keywords == nullptr ? nullptr : range_new(range_type, positional, keywords);
  Py_DECREF(positional);
  Py_XDECREF(keywords);
  return self;
}

// `gpuprobe.range("name")`, the form a serving loop calls once per request, without building an
// argument tuple and parsing it (the type's vectorcall); other forms go through range_new.
[[gnu::hot]] PyObject* range_vectorcall(PyObject* type, PyObject* const* args, std::size_t nargsf,
                                        PyObject* kwnames) {
  auto* range_type = reinterpret_cast<PyTypeObject*>(type);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs != 1 || kwnames != nullptr || !PyUnicode_CheckExact(args[0])) {
    return range_from_arguments(range_type, args, nargs, kwnames);
  }
  RangeObject* cached = cached_range_slot(args[0]);
  if (cached == nullptr || cached->name != args[0]) return new_cached_range(range_type, args[0]);
  Py_INCREF(cached);
  return reinterpret_cast<PyObject*>(cached);
}

void range_dealloc(PyObject* obj) {
  auto* self = reinterpret_cast<RangeObject*>(obj);
  Py_XDECREF(self->name);
  Py_TYPE(obj)->tp_free(obj);
}

// The lookup proper, out of line and cold: a range object's first entry in a session. Keeps the
// site in `range` — unless the session's name table was full: the shared "<name table full>" site
// is looked up (and counted, Stats::names_overflowed) at every entry.
[[gnu::cold, gnu::noinline]] const CallSite* intern_name(RangeObject& range, std::uint32_t epoch) {
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(range.name, &size);  // cached in the str
  if (text == nullptr) return nullptr;
  const CallSite* site =
      detail::intern(std::string_view(text, static_cast<std::size_t>(size)), range.category);
  if (site == detail::name_table_full_site()) return site;
  range.site = site;
  range.site_epoch = epoch;
  return site;
}

// The site `range` records under in the session of `epoch`, or nullptr with a Python error set.
// A range object keeps its site for the session it was interned in (a site stays valid for that
// whole session: the name table frees names only when a later session begins), so that an object
// entered again — a decorated function, a compiled graph's range, the object
// `gpuprobe.range("request")` gives back each request (range_vectorcall) — looks nothing up.
// Written under the GIL, as every other thread's entry of the object is.
inline const CallSite* site_for(RangeObject& range, std::uint32_t epoch) {
  if (GPUPROBE_LIKELY(range.site_epoch == epoch)) return range.site;
  return intern_name(range, epoch);
}

}  // namespace

[[gnu::hot]] bool thread_has_open_ranges() { return !this_threads_open().empty(); }

[[gnu::hot]] PyObject* range_enter(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<RangeObject*>(obj);
  OpenStack& open = this_threads_open();
  ManualRange& r = open.push(OpenRange{self, 0, {}}).range;
  if (const std::uint64_t gate = detail::gate_for(self->category); gate != 0) {
    named_for(open, gate);
    const CallSite* site = site_for(*self, detail::epoch_of(gate));
    if (site == nullptr) {
      open.pop_back();
      return nullptr;
    }
    r.begin_on_track(*site, self->category, current_track(open));
  }
  Py_INCREF(obj);
  return obj;
}

namespace {

// Ends the entry of `self` that this exit closes: its only entry on this thread; of several
// (recursion, or interleaved asyncio tasks entering one object — a decorated coroutine function,
// or the object gpuprobe.range("name") gives back), the innermost on the running task's track
// when any is on a task's track, else the innermost. Out of line: the usual exit, of the
// innermost range outside any task, never comes here.
[[gnu::noinline]] void end_entry_of(OpenStack& open, const RangeObject* self) {
  std::size_t innermost = open.size;
  std::size_t entries = 0;
  bool on_a_task = false;
  for (std::size_t i = open.size; i-- > 0;) {
    if (open[i].owner != self) continue;
    if (entries++ == 0) innermost = i;
    on_a_task = on_a_task || open[i].range.track() != 0;
  }
  if (entries == 0) return;
  if (entries > 1 && on_a_task) {
    const std::uint32_t track = current_track(open);
    for (std::size_t i = open.size; i-- > 0;) {
      if (open[i].owner == self && open[i].range.track() == track) return end_open(open, i);
    }
  }
  end_open(open, innermost);
}

}  // namespace

[[gnu::hot]] PyObject* range_exit(PyObject* obj, PyObject* const*, Py_ssize_t) {
  const auto* self = reinterpret_cast<const RangeObject*>(obj);
  OpenStack& open = this_threads_open();
  if (GPUPROBE_LIKELY(!open.empty() && open.back().owner == self &&
                      open.back().range.track() == 0)) {  // the innermost range, on no task
    open.back().range.end();
    open.pop_back();
    Py_RETURN_FALSE;
  }
  end_entry_of(open, self);
  Py_RETURN_FALSE;  // exceptions propagate
}

namespace {

// `@gpuprobe.range("name")`: the wrapping is Python's (functools.wraps keeps the function's
// name and docs), done by gpuprobe._decorate, which the package installs at import.
PyObject* g_decorate = nullptr;

PyObject* range_call(PyObject* obj, PyObject* args, PyObject* kwargs) {
  PyObject* fn = nullptr;
  if (kwargs != nullptr || !PyArg_UnpackTuple(args, "range", 1, 1, &fn)) {
    PyErr_SetString(PyExc_TypeError, "a range decorates one callable: @gpuprobe.range(\"name\")");
    return nullptr;
  }
  if (g_decorate == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "gpuprobe is not fully imported");
    return nullptr;
  }
  return PyObject_CallFunctionObjArgs(g_decorate, obj, fn, nullptr);
}

PyObject* range_get_name(PyObject* obj, void*) {
  PyObject* name = reinterpret_cast<RangeObject*>(obj)->name;
  Py_INCREF(name);
  return name;
}

PyGetSetDef kRangeGetSet[] = {{"name", range_get_name, nullptr, "The range's name.", nullptr},
                              {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kRangeSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(range_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(range_dealloc)},
    {Py_tp_call, reinterpret_cast<void*>(range_call)},
    {Py_tp_getset, kRangeGetSet},
    {Py_tp_doc,
     const_cast<char*>(
         "range(name, category='python'): `with gpuprobe.range(\"name\"):` or "
         "`@gpuprobe.range(\"name\")`. Recorded from entering to exiting, on the "
         "current thread, in the same rings as C++ ranges, if a session records its "
         "category (app, step, python, torch, compile, gc, alloc, cuda, user0..user7). "
         "range(name) may give back the object it built before for the same str: a range "
         "object holds no state of its own, so a loop that builds one per iteration "
         "allocates nothing.")},
    {0, nullptr}};

PyType_Spec kRangeSpec = {"gpuprobe.range", sizeof(RangeObject), 0, Py_TPFLAGS_DEFAULT,
                          kRangeSlots};

// ---- GC pauses ----

// gc.callbacks entry: a range "gc gen<N>" in category gc from "start" to "stop", and the
// objects collected as a counter.
thread_local ManualRange t_gc_range;

void gc_callback(const std::string& phase, const py::dict& info) {
  const std::uint64_t gate = detail::gate_for(Category::kGc);
  if (gate == 0) return;
  named_for(this_threads_open(), gate);
  static const std::string kNames[] = {std::string(fe::kGcGeneration) + "0",
                                       std::string(fe::kGcGeneration) + "1",
                                       std::string(fe::kGcGeneration) + "2"};
  if (phase == "start") {
    int generation = info.contains("generation") ? info["generation"].cast<int>() : 0;
    if (generation < 0 || generation > 2) generation = 2;
    t_gc_range.begin(kNames[generation], Category::kGc);
    return;
  }
  t_gc_range.end();
  if (info.contains("collected")) {
    counter(fe::kGcCollected, info["collected"].cast<double>(), Category::kGc);
  }
  if (info.contains("uncollectable")) {
    counter(fe::kGcUncollectable, info["uncollectable"].cast<double>(), Category::kGc);
  }
}

// Begins a range and returns the token end_range() takes.
std::uint64_t begin_range(const std::string& name, const std::string& category) {
  const std::uint64_t id = t_next_id++;
  const std::optional<Category> c = category_from(category);
  if (!c) throw py::value_error("unknown gpuprobe category '" + category + "'");
  named_now();
  t_open.push(OpenRange{nullptr, id, {}})
      .range.begin(name, *c);  // hooks are synchronous: the thread's track
  return id;
}

Category category_or_raise(const std::string& name) {
  const std::optional<Category> c = category_from(name);
  if (!c) throw py::value_error("unknown gpuprobe category '" + name + "'");
  return *c;
}

// The category of an event about to be recorded on this thread, which is named for it first.
Category event_category(const std::string& name) {
  const Category c = category_or_raise(name);
  named_now();
  return c;
}

}  // namespace
}  // namespace gpuprobe::python

PYBIND11_MODULE(_core, m) {
  using namespace gpuprobe;
  using namespace gpuprobe::python;
  m.doc() = "gpuprobe's C++ core: sessions, ranges, instants, counters, steps.";

  watch_asyncio();
  PyObject* range_type = PyType_FromSpec(&kRangeSpec);
  if (range_type == nullptr) throw py::error_already_set();
  // Types take a vectorcall for their construction in this field (never inherited).
  reinterpret_cast<PyTypeObject*>(range_type)->tp_vectorcall = range_vectorcall;
  if (!add_range_methods(range_type)) throw py::error_already_set();
  m.add_object("range", py::reinterpret_steal<py::object>(range_type));
  add_graph_runs(m, range_type);
  add_module_hooks(m);
  py::dict event_names;
  for (const formats::framework_events::NamedEvent& e : formats::framework_events::kAll)
    event_names[e.key] = e.name;
  m.attr("event_names") = event_names;
  // compare_modes()'s columns: (ModeResult field, counter mark), in the report's order.
  py::list mode_columns;
  for (const formats::framework_events::ModeColumn& c : formats::framework_events::kModeColumns)
    mode_columns.append(py::make_tuple(c.field, c.mark));
  m.attr("mode_columns") = mode_columns;
  m.def("_set_decorate", [](py::object fn) {
    Py_XDECREF(g_decorate);
    g_decorate = fn.release().ptr();
  });

  add_session(m);

  m.def(
      "instant",
      [](const std::string& name, const std::string& category) {
        instant(name, event_category(category));
      },
      py::arg("name"), py::arg("category") = "python");
  m.def(
      "counter",
      [](const std::string& name, double value, const std::string& category) {
        counter(name, value, event_category(category));
      },
      py::arg("name"), py::arg("value"), py::arg("category") = "python");
  m.def(
      "step",
      [](py::object number) {
        if (number.is_none()) {
          step();
        } else {
          step(number.cast<std::uint32_t>());
        }
      },
      py::arg("number") = py::none());
  m.def("_begin_steps", &begin_steps,
        "Marks where step 0 begins, recording no step (gpuprobe::begin_steps).");
  m.def(
      "_range_at",
      [](const std::string& name, const std::string& category, std::int64_t begin_ns,
         std::int64_t end_ns) { range_at(name, event_category(category), begin_ns, end_ns); },
      py::arg("name"), py::arg("category"), py::arg("begin_ns"), py::arg("end_ns"),
      "Records a range that already happened, between two time.time_ns() values.");
  m.def(
      "_instant_at",
      [](const std::string& name, const std::string& category, std::int64_t ns) {
        instant_at(name, event_category(category), ns);
      },
      py::arg("name"), py::arg("category"), py::arg("ns"),
      "Records an instant that already happened, at a time.time_ns() value.");
  m.def(
      "_stop_recording_session",
      [] {
        py::gil_scoped_release release;  // the collector's sinks may call back into Python
        const Status s = stop_recording_session();
        if (!s.ok()) std::fprintf(stderr, "gpuprobe: %s\n", s.message().c_str());
      },
      "Stops whichever session records and writes its outputs (registered with atexit).");
  m.def(
      "dump",
      [](const std::string& reason) -> py::object {
        std::string path;
        const Status s = dump(reason, &path);
        if (!s.ok()) {
          std::fprintf(stderr, "gpuprobe: dump: %s\n", s.message().c_str());
          return py::none();
        }
        return py::str(path);
      },
      py::arg("reason") = "",
      "Asks the flight recorder (flight=SECONDS) for a dump of the last seconds and the time "
      "after (dump_after), written while recording goes on. Returns the directory it will have, "
      "or None, saying why on stderr, when no session with a flight recorder records or "
      "dump_max_per_hour is reached. Never raises: it is meant for exception handlers and "
      "watchdogs of production programs.");
  m.def("set_thread_name", [](const std::string& name) { set_thread_name(name); });
  m.def("set_category_enabled", [](const std::string& category, bool enabled) {
    set_category_enabled(category_or_raise(category), enabled);
  });
  m.def(
      "_gate_view",
      [] {
        static_assert(sizeof(detail::g_gate) == sizeof(std::uint64_t));
        PyObject* view = PyMemoryView_FromMemory(reinterpret_cast<char*>(&detail::g_gate),
                                                 sizeof(std::uint64_t), PyBUF_READ);
        if (view == nullptr) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(view);
      },
      "The gate word's 8 bytes, read-only: zero while no session records. Module hooks read it "
      "(`memoryview.cast('Q')[0]`, 20 ns) rather than call in, so that a hook costs almost "
      "nothing with no session.");
  m.attr("_nvtx_tool") = py::bool_(GPUPROBE_HAVE_NVTX != 0);  // exports InitializeInjectionNvtx2
  m.def(
      "_torch_recording", [] { return detail::gate_for(Category::kTorch) != 0; },
      "Whether a session records category torch now (module hooks ask before noting inputs).");
  m.def("category_enabled",
        [](const std::string& category) { return category_enabled(category_or_raise(category)); });
  m.def("gc_callback", &gc_callback, "An entry for gc.callbacks: GC pauses as ranges.");
  m.def("_begin", &begin_range, py::arg("name"), py::arg("category") = "python",
        "Begins a range on this thread; returns the token _end() takes.");
  m.def(
      "_cpp_scope",
      [](const std::string& name, py::function fn) {
        ScopedRange range(name, Category::kApp);
        return fn();
      },
      py::arg("name"), py::arg("fn"),
      "Calls fn inside a C++ ScopedRange (category app): C++ code's ranges as Python sees them.");
  m.def("_end", &end_range, py::arg("token"),
        "Ends the range _begin() returned `token` for, and any left open inside it.");
  m.attr("version") = GPUPROBE_VERSION_STRING;
}
