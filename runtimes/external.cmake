# external.cmake — backends that are programs (harness/external.hpp,
# docs/adding-a-backend.md "A backend in another language").
#
# coopbench_add_external_backend(MANIFEST <backend.json> PROGRAM <path> [TARGET <target>])
#   writes the manifest, with "program" set to PROGRAM and "source" to the manifest's path
#   in the source tree, to ${COOPBENCH_EXTERNAL_DIR}/<name>.json, where the driver finds it;
#   TARGET (the custom target that builds PROGRAM) is built before the coopbench binary.
set(COOPBENCH_EXTERNAL_DIR ${CMAKE_BINARY_DIR}/backends)
# Start each configure afresh: a backend whose tool went away must not linger.
file(REMOVE_RECURSE ${COOPBENCH_EXTERNAL_DIR})
file(MAKE_DIRECTORY ${COOPBENCH_EXTERNAL_DIR})
function(coopbench_add_external_backend)
  cmake_parse_arguments(X "" "MANIFEST;PROGRAM;TARGET" "" ${ARGN})
  get_filename_component(_manifest ${X_MANIFEST} ABSOLUTE)
  file(READ ${_manifest} _json)
  string(JSON _name GET "${_json}" name)
  string(JSON _json SET "${_json}" program "\"${X_PROGRAM}\"")
  file(RELATIVE_PATH _rel ${PROJECT_SOURCE_DIR} ${_manifest})
  string(JSON _json SET "${_json}" source "\"${_rel}\"")
  string(REPLACE "/" "_" _file "${_name}")
  file(WRITE ${COOPBENCH_EXTERNAL_DIR}/${_file}.json "${_json}\n")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_manifest})
  if(X_TARGET)
    set_property(GLOBAL APPEND PROPERTY COOPBENCH_EXTERNAL_TARGETS ${X_TARGET})
  endif()
  message(STATUS "coopbench: external backend ${_name} (${_rel})")
endfunction()
