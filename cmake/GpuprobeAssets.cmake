# What the report page inlines, embedded at build time: dygraphs (Debian's libjs-dygraphs, MIT;
# chosen for drawing 100,000 points on a canvas with zoom and hover built in, in 131 kB), and the
# page's own script and style (tools/report_page/). Without dygraphs the command still builds;
# `report --html` then says what to install.
set(GPUPROBE_DYGRAPHS_DIR "")
foreach(prefix $ENV{CMAKE_PREFIX_PATH} ${CMAKE_PREFIX_PATH} /usr)
  if(EXISTS "${prefix}/share/javascript/dygraphs/dygraph.min.js")
    set(GPUPROBE_DYGRAPHS_DIR "${prefix}/share/javascript/dygraphs")
    break()
  endif()
endforeach()

# gpuprobe_embed(TARGET SYMBOL FILE): FILE's text in TARGET as assets::SYMBOL (embed_text.cmake).
function(gpuprobe_embed target symbol file)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/assets/${symbol}.cc")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DINPUT=${file} -DOUTPUT=${out} -DSYMBOL=${symbol} -P
            ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    DEPENDS "${file}" ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    COMMENT "Embedding ${file}")
  target_sources(${target} PRIVATE "${out}")
endfunction()

function(gpuprobe_report_page_assets target)
  if(GPUPROBE_DYGRAPHS_DIR STREQUAL "")
    message(STATUS "gpuprobe: no libjs-dygraphs: `report --html` will say so (apt install libjs-dygraphs)")
    target_compile_definitions(${target} PRIVATE GPUPROBE_REPORT_PAGE=0)
    return()
  endif()
  message(STATUS "gpuprobe: the report page inlines ${GPUPROBE_DYGRAPHS_DIR}/dygraph.min.js")
  target_compile_definitions(${target} PRIVATE GPUPROBE_REPORT_PAGE=1)
  gpuprobe_embed(${target} dygraph_js "${GPUPROBE_DYGRAPHS_DIR}/dygraph.min.js")
  gpuprobe_embed(${target} dygraph_css "${GPUPROBE_DYGRAPHS_DIR}/dygraph.min.css")
  gpuprobe_embed(${target} page_util_js "${PROJECT_SOURCE_DIR}/tools/report_page/util.js")
  gpuprobe_embed(${target} page_sections_js "${PROJECT_SOURCE_DIR}/tools/report_page/sections.js")
  gpuprobe_embed(${target} page_js "${PROJECT_SOURCE_DIR}/tools/report_page/page.js")
  gpuprobe_embed(${target} page_css "${PROJECT_SOURCE_DIR}/tools/report_page/page.css")
endfunction()
