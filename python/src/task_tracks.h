// asyncio tasks' tracks, recycled: a finished task's track is given to a later task, so that a
// program that runs millions of short tasks records on as many tracks (and names) as it ever had
// tasks running at once, not one per task. Internal to the module.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpuprobe::python {

/// The tracks of one thread's asyncio tasks (tasks run on their loop's thread). A track keeps
/// its label for the session — the outputs show one name per track — and goes back to a task
/// with the same label: a task named by the program keeps its name ("asyncio fetch a"), one left
/// with asyncio's default name ("Task-12345", new for every task) is labelled by its coroutine
/// ("asyncio handle_request"). When a session begins, free tracks lose their labels and go to
/// whichever task comes. Within a session, free tracks wait for a task of their label; past
/// kSpare of them, a task whose label has none takes a track labelled kGeneric instead of a new
/// one. With T the most tasks that ever hold a track at once — those live and those finished
/// but not yet given back (asyncio_tracks.cc: at most half as many as live ones, or 16) — tracks stay at
/// most 2 T + kSpare (T labelled ones and kSpare free, and T kGeneric ones), whatever labels the
/// program gives.
class TaskTracks {
 public:
  static constexpr std::size_t kSpare = 64;
  static constexpr const char* kGeneric = "asyncio task";

  /// A free track of `label` (or of kGeneric, see above), else a new one; its slot. `epoch`:
  /// the running session's.
  std::uint32_t acquire(const std::string& label, std::uint32_t epoch);
  /// The task of `slot` has finished and none of its ranges is open: its track may be reused.
  void release(std::uint32_t slot);

  std::uint32_t track(std::uint32_t slot) const { return slots_[slot].track; }
  const std::string& label(std::uint32_t slot) const { return slots_[slot].label; }
  /// The session (epoch) that was last told the track's name; 0: none.
  std::uint32_t& named_epoch(std::uint32_t slot) { return slots_[slot].named_epoch; }

  /// Tracks created, and those free now.
  std::size_t size() const { return slots_.size(); }
  std::size_t free_count() const { return free_count_; }

 private:
  struct Slot {
    std::uint32_t track;
    std::uint32_t named_epoch;
    std::string label;
  };
  std::vector<Slot> slots_;
  std::unordered_map<std::string, std::vector<std::uint32_t>> free_;  // label -> free slots
  std::vector<std::uint32_t> unlabeled_;  // free slots not named in this session
  std::size_t free_count_ = 0;            // in free_ and unlabeled_
  std::uint32_t epoch_ = 0;               // the session free_ belongs to
};

/// The label of `task`'s track: "asyncio <its name>" when the program named it, else
/// "asyncio <its coroutine's qualified name>" (asyncio's default name, "Task-<n>", is new for
/// every task). Never leaves a Python error set.
std::string task_label(PyObject* task);

}  // namespace gpuprobe::python
