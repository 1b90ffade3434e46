#include "metrics/civetweb_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "base/dynamic_symbol.h"

namespace gpuprobe::metrics {
namespace {

Status open_library(CivetwebApi* api) {
  const char* chosen = std::getenv("GPUPROBE_CIVETWEB_LIB");
  const std::string path = chosen != nullptr && *chosen != '\0' ? chosen : "libcivetweb.so.1";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Status::Error("cannot load " + path + " (" + (why != nullptr ? why : "?") +
                         "; Debian: apt install libcivetweb1, or set GPUPROBE_CIVETWEB_LIB)");
  }
  std::string missing;
  base::resolve_symbol(handle, "mg_init_library", &api->init_library, &missing);
  base::resolve_symbol(handle, "mg_start", &api->start, &missing);
  base::resolve_symbol(handle, "mg_stop", &api->stop, &missing);
  base::resolve_symbol(handle, "mg_set_request_handler", &api->set_request_handler, &missing);
  base::resolve_symbol(handle, "mg_get_request_info", &api->get_request_info, &missing);
  base::resolve_symbol(handle, "mg_get_header", &api->get_header, &missing);
  base::resolve_symbol(handle, "mg_send_http_ok", &api->send_http_ok, &missing);
  base::resolve_symbol(handle, "mg_write", &api->write, &missing);
  base::resolve_symbol(handle, "mg_send_http_error", &api->send_http_error, &missing);
  base::resolve_symbol(handle, "mg_get_server_ports", &api->get_server_ports, &missing);
  base::resolve_symbol(handle, "mg_get_var", &api->get_var, &missing);
  if (!missing.empty()) {
    dlclose(handle);
    return Status::Error(path + " lacks " + missing + " (civetweb 1.10 or newer is needed)");
  }
  api->init_library(0);
  return {};  // never closed: the library stays for the process, as servers may restart
}

}  // namespace

Status load_civetweb(const CivetwebApi** out) {
  static CivetwebApi api{};
  static Status outcome;
  static std::once_flag once;
  std::call_once(once, [] { outcome = open_library(&api); });
  *out = outcome.ok() ? &api : nullptr;
  return outcome;
}

}  // namespace gpuprobe::metrics
