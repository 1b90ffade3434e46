# cmake -DCLI=path/to/gpuprobe -DDATA_DIR=test/data -DGOLDEN_DIR=test/golden -DWORK_DIR=... [-DUPDATE=ON] -P this
#
# Behaviour kept: `gpuprobe report --json`, `gpuprobe report` (the text, NAME.report.txt) and
# `gpuprobe convert` give, on the traces kept in test/data, exactly what they gave when the
# golden files were written. The reports are compared whole (a change shows as a diff); conversions, megabytes each, by SHA-256. The Perfetto writer
# puts a fresh trace id in each file, so a Perfetto output is compared through its conversion
# back to Chrome JSON. With -DUPDATE=ON the golden files are rewritten instead: do that only for
# a change meant to alter the output, and say so in the commit.
function(run)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# The last run's output against GOLDEN_DIR/GOLDEN_NAME (or written there with UPDATE); a
# difference is added to `failures`, the output kept in WORK_DIR for the diff.
macro(compare golden_name what)
  set(golden ${GOLDEN_DIR}/${golden_name})
  if(UPDATE)
    file(WRITE ${golden} "${run_output}")
  elseif(NOT EXISTS ${golden})
    list(APPEND failures "missing ${golden}")
  else()
    file(READ ${golden} expected)
    if(NOT expected STREQUAL run_output)
      file(WRITE ${WORK_DIR}/${golden_name} "${run_output}")
      list(APPEND failures "${what} differs: diff ${golden} ${WORK_DIR}/${golden_name}")
    endif()
  endif()
endmacro()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(hashes "")
set(failures "")
file(GLOB traces ${DATA_DIR}/*.json.gz)
list(SORT traces)
foreach(trace ${traces})
  get_filename_component(name ${trace} NAME)
  string(REGEX REPLACE "\\.json\\.gz$" "" name ${name})
  # Outputs under names relative to WORK_DIR: the Chrome writer records the path it was given.
  run(${CLI} convert ${trace} ${name}.json)
  run(${CLI} convert ${trace} ${name}.pftrace)
  run(${CLI} convert ${name}.pftrace ${name}.back.json)
  foreach(report_input ${trace} ${name}.pftrace)
    run(${CLI} report --json ${report_input})
    if(report_input STREQUAL trace)
      compare(${name}.report.json "report --json ${report_input}")
    else()
      compare(${name}.pftrace.report.json "report --json ${report_input}")
    endif()
  endforeach()
  # The text, from the same description as the JSON's "sections": unchanged to the byte.
  run(${CLI} report ${trace})
  compare(${name}.report.txt "report ${trace}")
  foreach(output ${name}.json ${name}.back.json)
    file(SHA256 ${WORK_DIR}/${output} sum)
    string(APPEND hashes "${sum}  ${output}\n")
  endforeach()
endforeach()

if(UPDATE)
  file(WRITE ${GOLDEN_DIR}/conversions.sha256 "${hashes}")
  message(STATUS "golden files rewritten in ${GOLDEN_DIR}")
  return()
endif()
file(READ ${GOLDEN_DIR}/conversions.sha256 expected_hashes)
if(NOT expected_hashes STREQUAL hashes)
  file(WRITE ${WORK_DIR}/conversions.sha256 "${hashes}")
  list(APPEND failures "conversions differ: diff ${GOLDEN_DIR}/conversions.sha256 ${WORK_DIR}/conversions.sha256")
endif()
if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "output changed against the golden files:\n  ${failures}")
endif()
message(STATUS "report --json, report and convert match the golden files for ${traces}")
