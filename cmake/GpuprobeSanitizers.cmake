# GPUPROBE_SANITIZE applies sanitizers to everything built here (library, tests, examples), so
# a whole test run is checked, not only the library's own code.
if(GPUPROBE_SANITIZE STREQUAL "")
  return()
elseif(GPUPROBE_SANITIZE STREQUAL "address+undefined")
  set(_gpuprobe_san_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
elseif(GPUPROBE_SANITIZE STREQUAL "thread")
  set(_gpuprobe_san_flags -fsanitize=thread -fno-omit-frame-pointer)
else()
  message(FATAL_ERROR "GPUPROBE_SANITIZE must be address+undefined, thread or empty, not '${GPUPROBE_SANITIZE}'")
endif()
add_compile_options(${_gpuprobe_san_flags})
add_link_options(${_gpuprobe_san_flags})
message(STATUS "gpuprobe: sanitizers ${GPUPROBE_SANITIZE}")
