# SPDX-License-Identifier: Apache-2.0
# Checks that the first ```LANG block (default c) of the Markdown page PAGE is the file FILE,
# byte for byte:
#   cmake -DPAGE=<page.md> -DFILE=<program.c> [-DLANG=cpp] -P check_doc_program.cmake
if(NOT DEFINED LANG)
  set(LANG c)
endif()
file(READ ${PAGE} page)
file(READ ${FILE} want)
string(FIND "${page}" "```${LANG}\n" open)
if(open EQUAL -1)
  message(FATAL_ERROR "${PAGE} has no ```${LANG} block")
endif()
string(LENGTH "```${LANG}\n" fence)
math(EXPR start "${open} + ${fence}")
string(SUBSTRING "${page}" ${start} -1 rest)
string(FIND "${rest}" "```\n" close)
string(SUBSTRING "${rest}" 0 ${close} block)
if(NOT block STREQUAL want)
  message(FATAL_ERROR "the first ```${LANG} block of ${PAGE} is not ${FILE}: copy the file into it")
endif()
message(STATUS "${PAGE} shows ${FILE}")
