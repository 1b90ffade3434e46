# The layers, enforced by the build. Each folder of lib/ is a layer; a target of a layer compiles
# with an include root of its own that holds only the folders it may use (symbolic links in the
# build tree), so that `#include "readers/..."` from a sink fails to compile instead of waiting
# for review. Ground: include/ (the public API, on every target) and lib/base, lib/formats.
#
#   base, formats            the one stderr line and the one way to write a file; the option
#                            table each layer declares its own config keys with; the trace
#                            vocabulary (Kineto names, Perfetto field numbers, category and
#                            step names)
#   core                     the recording runtime: clock, rings, registry, interning, collector,
#                            and its own options (no other layer's key)
#   gpu, sinks, metrics      the GPU sources (CUPTI and the GPU pipeline behind it: launch
#                            matching, range attribution, kernel notes; CUDA-event timing);
#                            the output formats; Prometheus metrics computed from the events
#   readers, analysis        reading traces into any Sink; the report's analyses, one per
#                            file, and the Sink that feeds them
#   flight                   the flight recorder: the last seconds in memory, the triggers,
#                            and dumps written through the registered sinks
#   session, tools           the composition root (puts the layers' option tables together
#                            into the config, builds the sinks a config names and the
#                            flight recorder, wires POST /dump to it, the environment session,
#                            fork and signals); the gpuprobe command
#
# gpuprobe_layer_includes(TARGET FOLDER...): TARGET may include "FOLDER/..." for each FOLDER.
function(gpuprobe_layer_includes target)
  set(root ${PROJECT_BINARY_DIR}/layer_includes/${target})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root})
  foreach(folder ${ARGN})
    if(NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/lib/${folder})
      message(FATAL_ERROR "gpuprobe_layer_includes(${target}): no folder lib/${folder}")
    endif()
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/lib/${folder} ${root}/${folder} SYMBOLIC)
  endforeach()
  target_include_directories(${target} PRIVATE ${root})
endfunction()
