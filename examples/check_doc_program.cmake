# SPDX-License-Identifier: Apache-2.0
# Checks that the first ```c block of the Markdown page PAGE is the file FILE, byte for byte:
#   cmake -DPAGE=<page.md> -DFILE=<program.c> -P check_doc_program.cmake
file(READ ${PAGE} page)
file(READ ${FILE} want)
string(FIND "${page}" "```c\n" open)
if(open EQUAL -1)
  message(FATAL_ERROR "${PAGE} has no ```c block")
endif()
math(EXPR start "${open} + 5")
string(SUBSTRING "${page}" ${start} -1 rest)
string(FIND "${rest}" "```\n" close)
string(SUBSTRING "${rest}" 0 ${close} block)
if(NOT block STREQUAL want)
  message(FATAL_ERROR "the first ```c block of ${PAGE} is not ${FILE}: copy the file into it")
endif()
message(STATUS "${PAGE} shows ${FILE}")
