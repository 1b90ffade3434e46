#include "task_tracks.h"

#include <algorithm>
#include <string_view>

#include "gpuprobe/range.hpp"

namespace gpuprobe::python {

std::uint32_t TaskTracks::acquire(const std::string& label, std::uint32_t epoch) {
  if (epoch != epoch_) {
    // A new session: no free track has been named in it yet.
    epoch_ = epoch;
    for (const auto& [name, slots] : free_)
      unlabeled_.insert(unlabeled_.end(), slots.begin(), slots.end());
    free_.clear();
  }
  auto it = free_.find(label);
  if (it == free_.end() && unlabeled_.empty() && free_count_ >= kSpare) it = free_.find(kGeneric);
  if (it != free_.end()) {
    // Lists are never left empty in the map.
    const std::uint32_t slot = it->second.back();
    it->second.pop_back();
    if (it->second.empty()) free_.erase(it);
    --free_count_;
    return slot;
  }
  if (!unlabeled_.empty()) {
    const std::uint32_t slot = unlabeled_.back();
    unlabeled_.pop_back();
    --free_count_;
    slots_[slot].label = label;
    slots_[slot].named_epoch = 0;
    return slot;
  }
  slots_.push_back(Slot{new_track(), 0, free_count_ >= kSpare ? std::string(kGeneric) : label});
  return static_cast<std::uint32_t>(slots_.size() - 1);
}

void TaskTracks::release(std::uint32_t slot) {
  // A track not named in this session (its task began in an earlier one) may take any label.
  if (slots_[slot].named_epoch == epoch_) {
    free_[slots_[slot].label].push_back(slot);
  } else {
    unlabeled_.push_back(slot);
  }
  ++free_count_;
}

namespace {

// True for asyncio's default task name, "Task-<n>": a new one for every task.
bool default_task_name(std::string_view name) {
  constexpr std::string_view kPrefix = "Task-";
  if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) return false;
  return std::all_of(name.begin() + kPrefix.size(), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string task_label(PyObject* task) {
  std::string name;
  if (PyObject* n = PyObject_CallMethod(task, "get_name", nullptr)) {
    if (const char* text = PyUnicode_Check(n) ? PyUnicode_AsUTF8(n) : nullptr) name = text;
    Py_DECREF(n);
  }
  PyErr_Clear();
  if (name.empty() || default_task_name(name)) {
    name = "task";
    if (PyObject* coro = PyObject_CallMethod(task, "get_coro", nullptr)) {
      if (PyObject* q = PyObject_GetAttrString(coro, "__qualname__")) {
        if (const char* text = PyUnicode_Check(q) ? PyUnicode_AsUTF8(q) : nullptr) name = text;
        Py_DECREF(q);
      }
      Py_DECREF(coro);
    }
    PyErr_Clear();
  }
  return "asyncio " + name;
}

}  // namespace gpuprobe::python
