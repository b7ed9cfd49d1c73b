# SPDX-License-Identifier: Apache-2.0
# Runs PROGRAM and compares its output, from the second line on (the first names the library's
# version), with the file EXPECTED:
#   cmake -DPROGRAM=<path> -DEXPECTED=<file> -P check_output.cmake
execute_process(COMMAND ${PROGRAM} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}:\n${out}")
endif()
string(FIND "${out}" "\n" first_newline)
math(EXPR body_start "${first_newline} + 1")
string(SUBSTRING "${out}" ${body_start} -1 body)
file(READ ${EXPECTED} want)
if(NOT body STREQUAL want)
  message(FATAL_ERROR "${PROGRAM} printed\n${body}\nbut ${EXPECTED} holds\n${want}")
endif()
message(STATUS "output matches ${EXPECTED}")
