# check_compile.cmake — compile one file and check the outcome (run by CTest with -P).
#   -DCXX=compiler -DSRC=file -DINC=include roots (separated by |) -DEXPECT=fail|pass [-DDEFS=-DX]
#   [-DMEMBER=text]
# EXPECT=fail: the compiler must fail; CTest's PASS_REGULAR_EXPRESSION then checks its
# message, which is echoed here (and FAIL_REGULAR_EXPRESSION "check_compile: FAILED" catches
# a failed check below, since a pass expression alone ignores the exit code).
# EXPECT=pass: the compiler must succeed.
string(REPLACE "|" ";" _roots "${INC}")
list(TRANSFORM _roots PREPEND -I)
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only ${_roots} ${DEFS} ${SRC}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(EXPECT STREQUAL "fail")
  if(rc EQUAL 0)
    message(FATAL_ERROR "check_compile: FAILED: expected ${SRC} to fail to compile, but it compiled")
  endif()
  # The diagnostic must name the missing member (the concept's requirement), not just fail.
  string(FIND "${out}${err}" "${MEMBER}" at)
  if(MEMBER AND at EQUAL -1)
    message(FATAL_ERROR "check_compile: FAILED: the compiler's message does not name the missing member '${MEMBER}'")
  endif()
else()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_compile: FAILED: expected ${SRC} ${DEFS} to compile (exit ${rc})")
  endif()
  message("compiled as expected")
endif()
