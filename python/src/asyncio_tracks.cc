// asyncio: each task's ranges on a track of its own.
// A task's range crosses its `await`s while other tasks run on the thread, so the ranges of
// tasks interleave: on the thread's track they would be drawn as a wrong nest (one task's range
// as the parent of another's). Ranges opened inside a task go on the task's track instead
// (ManualRange::begin_on_track), which the outputs show as a thread named "asyncio <task name>"
// (or "asyncio <coroutine>" for a task left with asyncio's default name). A finished task's
// track goes to a later task (task_tracks.h), so that tracks and their names stay as many as
// the tasks live at once.
#include "asyncio_tracks.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "task_tracks.h"
#include "thread_names.h"

namespace gpuprobe::python {
namespace {

// asyncio's C parts, looked up once `_asyncio` has been imported (by asyncio): the running loop,
// and the current task — a function from Python 3.12, before it the dictionary loop -> task.
// Every recording range outside a loop asks for the loop, so that call goes straight to the C
// function (METH_NOARGS), not through Python's call machinery.
PyObject* g_get_running_loop = nullptr;
PyCFunction g_get_running_loop_c = nullptr;
PyObject* g_get_running_loop_self = nullptr;
PyObject* g_set_running_loop = nullptr;
PyObject* g_current_task = nullptr;
PyObject* g_current_tasks = nullptr;
PyObject* g_asyncio_name = nullptr;  // "_asyncio", interned (watch_asyncio)

// Looks up asyncio's C parts once `_asyncio` is imported; false until then, or for an asyncio
// we do not know. Out of line and cold: a recording range's entry runs it only until it succeeds,
// and its code would otherwise sit in the cache lines of the entry's own.
[[gnu::cold, gnu::noinline]] bool find_asyncio() {
  if (g_asyncio_name == nullptr) return false;
  PyObject* module = PyDict_GetItemWithError(PyImport_GetModuleDict(), g_asyncio_name);
  if (module == nullptr) {
    PyErr_Clear();
    return false;  // a dictionary lookup per range until asyncio is imported
  }
  PyObject* loop_fn = PyObject_GetAttrString(module, "_get_running_loop");
  PyObject* task_fn = PyObject_GetAttrString(module, "current_task");
  PyObject* tasks = task_fn != nullptr ? nullptr : PyObject_GetAttrString(module, "_current_tasks");
  PyErr_Clear();
  if (loop_fn == nullptr || (task_fn == nullptr && (tasks == nullptr || !PyDict_Check(tasks)))) {
    Py_XDECREF(loop_fn);
    Py_XDECREF(task_fn);
    Py_XDECREF(tasks);
    Py_CLEAR(g_asyncio_name);  // an asyncio we do not know: ranges stay on their threads
    return false;
  }
  g_get_running_loop = loop_fn;
  g_set_running_loop = PyObject_GetAttrString(module, "_set_running_loop");
  PyErr_Clear();
  g_current_task = task_fn;
  g_current_tasks = tasks;
  if (PyCFunction_Check(loop_fn) && (PyCFunction_GetFlags(loop_fn) & METH_NOARGS) != 0) {
    g_get_running_loop_c = PyCFunction_GetFunction(loop_fn);
    g_get_running_loop_self = PyCFunction_GetSelf(loop_fn);
  }
  return true;
}

// A task seen on this thread, until it has finished and been forgotten (prune_tasks).
struct TaskTrack {
  PyObject* task_ref;  // a weak reference: an address can be reused once the task is gone
  std::uint32_t slot;  // its track in t_task_tracks
};
// Tasks run on their loop's thread, so the map and the tracks are per thread.
thread_local std::unordered_map<const PyObject*, TaskTrack> t_tasks;
thread_local TaskTracks t_task_tracks;
// Tracks of finished tasks that still have a range open (a range object entered in the task and
// never exited): reused only once it has ended, so that two tasks' ranges never share a track at
// once.
thread_local std::vector<std::uint32_t> t_retiring;
// Finished tasks are found once the map has grown by half since it was last pruned, or by
// kPruneEvery: a short task's track is back in use soon after, the tasks holding a track beyond
// the live ones stay at most half as many (or kPruneEvery), and pruning costs each new task a
// constant share.
constexpr std::size_t kPruneEvery = 16;
thread_local std::size_t t_prune_at = kPruneEvery;

// Gives back the track of a finished task's slot, or keeps it aside while one of this thread's
// open ranges is on it.
void release_track(OpenStack& open, std::uint32_t slot) {
  const std::uint32_t track = t_task_tracks.track(slot);
  for (std::size_t i = 0; i < open.size; ++i) {
    if (open[i].range.track() == track) {
      t_retiring.push_back(slot);
      return;
    }
  }
  t_task_tracks.release(slot);
}

// Forgets finished tasks, giving their tracks back.
void prune_tasks(OpenStack& open) {
  std::vector<std::uint32_t> retiring;
  retiring.swap(t_retiring);
  for (const std::uint32_t slot : retiring) release_track(open, slot);
  for (auto it = t_tasks.begin(); it != t_tasks.end();) {
    if (PyWeakref_GetObject(it->second.task_ref) == Py_None) {
      Py_DECREF(it->second.task_ref);
      release_track(open, it->second.slot);
      it = t_tasks.erase(it);
    } else {
      ++it;
    }
  }
  t_prune_at = t_tasks.size() + std::max(kPruneEvery, t_tasks.size() / 2);
}

// The track of the task running in `loop` (what _get_running_loop returned: a new reference,
// or nullptr with an error set), named in this session; 0 outside a task.
[[gnu::noinline]] std::uint32_t loop_track(OpenStack& open, PyObject* loop) {
  if (loop == nullptr) {
    PyErr_Clear();
    return 0;
  }
  PyObject* task = nullptr;
  if (g_current_task != nullptr) {
    task = PyObject_CallOneArg(g_current_task, loop);
  } else {
    task = PyDict_GetItemWithError(g_current_tasks, loop);  // borrowed
    Py_XINCREF(task);
  }
  Py_DECREF(loop);
  if (task == nullptr || task == Py_None) {
    if (task == nullptr) PyErr_Clear();
    Py_XDECREF(task);
    return 0;
  }
  const std::uint32_t epoch = detail::epoch_of(detail::g_gate.load(std::memory_order_relaxed));
  auto it = t_tasks.find(task);
  if (it != t_tasks.end() && PyWeakref_GetObject(it->second.task_ref) != task) {
    Py_DECREF(it->second.task_ref);  // another task that had this address, finished
    release_track(open, it->second.slot);
    t_tasks.erase(it);
    it = t_tasks.end();
  }
  if (it == t_tasks.end()) {
    if (t_tasks.size() >= t_prune_at) prune_tasks(open);
    PyObject* ref = PyWeakref_NewRef(task, nullptr);
    if (ref == nullptr) {
      PyErr_Clear();
      Py_DECREF(task);
      return 0;
    }
    it =
        t_tasks.emplace(task, TaskTrack{ref, t_task_tracks.acquire(task_label(task), epoch)}).first;
  }
  // Named once per session, before its first range, so that every output has the name.
  const std::uint32_t slot = it->second.slot;
  if (t_task_tracks.named_epoch(slot) != epoch) {
    name_track(t_task_tracks.track(slot), t_task_tracks.label(slot));
    t_task_tracks.named_epoch(slot) = epoch;
  }
  Py_DECREF(task);
  return t_task_tracks.track(slot);
}

// Tells asyncio, once per thread, that no loop runs on this thread — which _get_running_loop
// has just said: `_set_running_loop(None)` changes nothing asyncio or a loop can see, but
// CPython's asyncio (3.7 to 3.13) answers _get_running_loop from a cache only for the thread
// that last set its loop, and otherwise looks in the thread's state dictionary each time (on
// 3.11: 47 ns a call before, 18 after, timeit). Cold: a thread's first recording range only.
[[gnu::cold, gnu::noinline]] void tell_asyncio_no_loop(OpenStack& open) {
  open.no_loop_told = true;
  if (g_set_running_loop == nullptr) return;
  PyObject* result = PyObject_CallOneArg(g_set_running_loop, Py_None);
  if (result == nullptr) PyErr_Clear();
  Py_XDECREF(result);
}

}  // namespace

void watch_asyncio() { g_asyncio_name = PyUnicode_InternFromString("_asyncio"); }

// The track for ranges opened now on this thread: the running task's, or 0 (the thread's). Only
// the question "is a loop running here?" is inline: outside a loop — every range of a
// synchronous server — the entry runs nothing else. Never leaves a Python error set.
[[gnu::hot]] std::uint32_t current_track(OpenStack& open) {
  if (g_get_running_loop == nullptr && !find_asyncio()) return 0;
  PyObject* loop = g_get_running_loop_c != nullptr
                       ? g_get_running_loop_c(g_get_running_loop_self, nullptr)
                       : PyObject_CallNoArgs(g_get_running_loop);
  if (loop == Py_None) {
    Py_DECREF(loop);
    if (GPUPROBE_UNLIKELY(!open.no_loop_told)) tell_asyncio_no_loop(open);
    return 0;
  }
  return loop_track(open, loop);
}

}  // namespace gpuprobe::python
