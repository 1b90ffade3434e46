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
# Line tables only (-g1, after the build type's -g): a sanitizer's report still names each frame's
# function, file and line, while the objects shrink to a fraction (the two sanitizer trees took
# 6 GB with full debug information) and link faster.
add_compile_options(${_gpuprobe_san_flags} -g1)
add_link_options(${_gpuprobe_san_flags})
message(STATUS "gpuprobe: sanitizers ${GPUPROBE_SANITIZE}")
