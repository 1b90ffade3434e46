# cmake -DPROGRAM=... -DOUTPUT=... -DEXPECT=regex -P this: runs an example that writes OUTPUT and
# checks that OUTPUT matches EXPECT.
file(REMOVE ${OUTPUT})
execute_process(COMMAND ${PROGRAM} ${OUTPUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${OUTPUT} content)
if(NOT content MATCHES "${EXPECT}")
  message(FATAL_ERROR "${OUTPUT} does not match '${EXPECT}':\n${content}")
endif()
file(REMOVE ${OUTPUT})
