#include "thread_names.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string_view>

#include "gpuprobe/range.hpp"

namespace gpuprobe::python {
namespace {

// The name `threading` gives the calling thread, as a new reference to a str; nullptr (and no
// error set) when it has none to give: threading not imported, the thread not in its table
// (started outside threading), the main thread (its OS name is the process's, which says more
// than "MainThread"), or a dummy thread (threading's stand-in for one it did not start).
PyObject* threading_name() {
  PyObject* threading = PyDict_GetItemString(PyImport_GetModuleDict(), "threading");  // borrowed
  if (threading == nullptr) return nullptr;
  PyObject* active = PyObject_GetAttrString(threading, "_active");
  PyObject* ident = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
  PyObject* thread = nullptr;
  if (active != nullptr && ident != nullptr && PyDict_Check(active)) {
    thread = PyDict_GetItemWithError(active, ident);  // borrowed
    Py_XINCREF(thread);
  }
  Py_XDECREF(ident);
  Py_XDECREF(active);
  if (thread == nullptr) return nullptr;
  PyObject* name = nullptr;
  bool skip = false;
  for (const char* kind : {"_MainThread", "_DummyThread"}) {
    PyObject* type = PyObject_GetAttrString(threading, kind);
    if (type == nullptr || !PyType_Check(type) ||
        PyObject_IsInstance(thread, type) != 0) {  // 1, or -1 on an error
      skip = true;
    }
    Py_XDECREF(type);
  }
  // The attribute Thread.name reads: no property of a subclass runs.
  if (!skip) name = PyObject_GetAttrString(thread, "_name");
  Py_DECREF(thread);
  if (name != nullptr && !PyUnicode_Check(name)) Py_CLEAR(name);
  return name;
}

}  // namespace

void name_thread_from_threading() noexcept {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);  // an error the caller has pending stays as it was
  if (PyObject* name = threading_name()) {
    Py_ssize_t size = 0;
    if (const char* text = PyUnicode_AsUTF8AndSize(name, &size); text != nullptr && size > 0)
      detail::set_runtime_thread_name(std::string_view(text, static_cast<std::size_t>(size)));
    Py_DECREF(name);
  }
  PyErr_Clear();
  PyErr_Restore(type, value, traceback);
}

}  // namespace gpuprobe::python
