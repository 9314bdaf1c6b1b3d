# Included by the scripts behind the `gpu` ctests that run a chapter (expect.cmake with GPU_TEST, same_output.cmake,
# chapter_trace.cmake). A chapter on a machine without a GPU prints "no CUDA GPU was found" and exits 2; ctest marks
# such a test skipped (ladder_gpu_test_properties: SKIP_REGULAR_EXPRESSION). With LADDER_REQUIRE_GPU=1, set on every
# GPU machine, a skip would hide that nothing ran: there the test fails instead, with a message that leaves that
# phrase out, so ctest cannot take it for a skip.
macro(ladder_stop_if_no_gpu output what)
  if("${output}" MATCHES "no CUDA GPU was found")
    if(NOT "$ENV{LADDER_REQUIRE_GPU}" STREQUAL "" AND NOT "$ENV{LADDER_REQUIRE_GPU}" STREQUAL "0")
      message(FATAL_ERROR "LADDER_REQUIRE_GPU is set, but ${what} found no GPU to run on")
    endif()
    message(STATUS "${output}")
    return()  # skipped: the phrase above is in the output
  endif()
endmacro()
