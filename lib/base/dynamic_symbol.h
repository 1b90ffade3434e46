// Functions of a library opened with dlopen (libcupti): looked up by name, with the
// names that were not there collected for one error message.
#pragma once

#include <dlfcn.h>

#include <string>

namespace gpuprobe::base {

// Sets `*out` to `symbol` in `handle`; when it is missing, appends its name to `*missing`
// (", "-separated) and returns false.
template <class Fn>
bool resolve_symbol(void* handle, const char* symbol, Fn* out, std::string* missing) {
  *out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (*out != nullptr) return true;
  if (!missing->empty()) *missing += ", ";
  *missing += symbol;
  return false;
}

}  // namespace gpuprobe::base
