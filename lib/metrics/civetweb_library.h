// civetweb, the embedded HTTP server behind `metrics=`, loaded with dlopen when a session asks
// for the endpoint: programs (and the Python wheel) that never serve metrics need no libcivetweb,
// and one that does says what is missing instead of failing to start.
#pragma once

#include <civetweb.h>

#include "gpuprobe/status.hpp"

namespace gpuprobe::metrics {

// The civetweb functions gpuprobe calls.
struct CivetwebApi {
  unsigned (*init_library)(unsigned);
  mg_context* (*start)(const mg_callbacks*, void*, const char**);
  void (*stop)(mg_context*);
  void (*set_request_handler)(mg_context*, const char*, mg_request_handler, void*);
  const mg_request_info* (*get_request_info)(const mg_connection*);
  const char* (*get_header)(const mg_connection*, const char*);
  int (*send_http_ok)(mg_connection*, const char*, long long);
  int (*write)(mg_connection*, const void*, size_t);
  int (*send_http_error)(mg_connection*, int, const char*, ...);
  int (*get_server_ports)(const mg_context*, int, mg_server_port*);
  int (*get_var)(const char*, size_t, const char*, char*, size_t);
};

// Opens libcivetweb once per process (GPUPROBE_CIVETWEB_LIB, else libcivetweb.so.1); later calls
// return the same outcome.
[[nodiscard]] Status load_civetweb(const CivetwebApi** out);

}  // namespace gpuprobe::metrics
