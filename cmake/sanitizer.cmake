# Runs CMD (a ;-list: a chapter with --check-only) under compute-sanitizer --tool TOOL (memcheck, racecheck,
# synccheck) and fails on any error it reports. SANITIZER: the compute-sanitizer found at configure time, or empty.
# Where there is none, or no GPU, the test is skipped (the phrases "compute-sanitizer was not found" and "no CUDA GPU
# was found" are its skip regexes), except under LADDER_REQUIRE_GPU=1, where both fail (no_gpu.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/no_gpu.cmake)
if(NOT SANITIZER OR NOT EXISTS "${SANITIZER}")
  if(NOT "$ENV{LADDER_REQUIRE_GPU}" STREQUAL "" AND NOT "$ENV{LADDER_REQUIRE_GPU}" STREQUAL "0")
    message(FATAL_ERROR "LADDER_REQUIRE_GPU is set, but this build has no compute-sanitizer to run the test with")
  endif()
  message(STATUS "compute-sanitizer was not found when the build was configured")
  return()
endif()
execute_process(COMMAND ${SANITIZER} --tool ${TOOL} --error-exitcode 99 ${CMD}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
ladder_stop_if_no_gpu("${all}" "the command")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compute-sanitizer --tool ${TOOL} exited ${rc} (99: it found errors); output:\n${all}")
endif()
message(STATUS "ok: compute-sanitizer --tool ${TOOL} found no errors; output:\n${all}")
