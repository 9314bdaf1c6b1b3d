# Shared build settings and the helpers that add a library's tests and a chapter.

# Warnings for host code, whether g++ sees it directly or through nvcc.
function(ladder_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr -lineinfo>)
endfunction()

# Host-side targets: the chapters' main.cu, the chapter room (options, report), the tools and the benchmarks' host code
# run nothing hot, so in a Release build their C++ compiles at -O1 instead of -O3 (a chapter's main.cu: 5 s instead of
# 9 s on a 2-core machine), and the tests' at -O0 (a test file: 8 s instead of 13 s). The hot host code (the ops, the
# profiler, the trace library) and every kernel keep -O3. They also share a precompiled header of the heavy header-only
# libraries (CLI11, fmt, GoogleTest, and nlohmann-json, with which the tests check the JSON our writer produces), built
# with the same flags so that it matches. -DLADDER_PCH=OFF turns the precompiled headers off.
set(ladder_host_side_cli $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release>>:-O1>)
set(ladder_host_side_test $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release>>:-O0>)
option(LADDER_PCH "Precompile the heavy third-party headers once per build" ON)
if(LADDER_PCH)
  add_library(ladder_pch_cli STATIC ${PROJECT_SOURCE_DIR}/cmake/pch.cpp)
  target_link_libraries(ladder_pch_cli PRIVATE CLI11::CLI11 fmt::fmt)
  target_precompile_headers(ladder_pch_cli PRIVATE <CLI/CLI.hpp> <fmt/format.h>)
  if(BUILD_TESTING)
    add_library(ladder_pch_test STATIC ${PROJECT_SOURCE_DIR}/cmake/pch.cpp)
    target_link_libraries(ladder_pch_test PRIVATE GTest::gtest fmt::fmt nlohmann_json::nlohmann_json)
    target_precompile_headers(ladder_pch_test PRIVATE <gtest/gtest.h> <fmt/format.h> <nlohmann/json.hpp>)
  endif()
  foreach(which cli test)
    if(TARGET ladder_pch_${which})
      ladder_warnings(ladder_pch_${which})
      target_compile_options(ladder_pch_${which} PRIVATE ${ladder_host_side_${which}})
    endif()
  endforeach()
endif()

# ladder_host_side(TARGET cli|test): -O1 (cli) or -O0 (test), and the matching shared precompiled header.
function(ladder_host_side target which)
  target_compile_options(${target} PRIVATE ${ladder_host_side_${which}})
  if(LADDER_PCH AND TARGET ladder_pch_${which})
    target_precompile_headers(${target} REUSE_FROM ladder_pch_${which})
  endif()
endfunction()

# A .cu file that defines no kernel and launches none (a chapter's main, most GPU tests) is host code: g++ compiles it
# once, where nvcc would run a host pass plus a device pass per GPU architecture for nothing.
function(ladder_host_only_cu)
  foreach(src ${ARGN})
    if(src MATCHES "\\.cu$")
      file(READ ${src} text)
      if(NOT text MATCHES "__global__|__device__|<<<")
        set_source_files_properties(${src} PROPERTIES LANGUAGE CXX)
      endif()
    endif()
  endforeach()
endfunction()

# A ctest that runs a chapter on the GPU: label `gpu`, and "skipped" on a machine without a GPU, where the chapter says
# "no CUDA GPU was found". Its script (cmake/no_gpu.cmake) fails instead, without that phrase, under
# LADDER_REQUIRE_GPU=1: every GPU machine sets it, so a GPU the tests cannot see fails the run instead of skipping it.
function(ladder_gpu_test_properties)
  set_tests_properties(${ARGN} PROPERTIES LABELS gpu SKIP_REGULAR_EXPRESSION "no CUDA GPU was found")
endfunction()

# ladder_test(NAME SOURCES... LIBS... [GPU]): a GoogleTest binary beside what it tests. GPU tests call GTEST_SKIP()
# without a device and carry the ctest label `gpu`, so `ctest -L gpu` on a GPU machine runs exactly them.
function(ladder_test name)
  if(NOT BUILD_TESTING)
    return()
  endif()
  cmake_parse_arguments(T "GPU" "" "SOURCES;LIBS" ${ARGN})
  ladder_host_only_cu(${T_SOURCES})
  add_executable(${name} ${T_SOURCES})
  ladder_warnings(${name})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  ladder_host_side(${name} test)
  target_compile_definitions(${name} PRIVATE LADDER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(T_GPU)
    gtest_discover_tests(${name} PROPERTIES LABELS gpu DISCOVERY_TIMEOUT 60)
  else()
    gtest_discover_tests(${name} PROPERTIES LABELS cpu DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# ladder_library_tests(PREFIX DIR LIBS...): DIR/tests/cpu_*.cpp|cu become PREFIX_cpu_tests, DIR/tests/gpu_*.cpp|cu
# PREFIX_gpu_tests (those only with CUDA).
function(ladder_library_tests prefix dir)
  file(GLOB cpu_tests CONFIGURE_DEPENDS ${dir}/tests/cpu_*.cpp ${dir}/tests/cpu_*.cu)
  file(GLOB gpu_tests CONFIGURE_DEPENDS ${dir}/tests/gpu_*.cpp ${dir}/tests/gpu_*.cu)
  if(cpu_tests)
    ladder_test(${prefix}_cpu_tests SOURCES ${cpu_tests} LIBS ${ARGN})
  endif()
  if(gpu_tests AND LADDER_HAVE_CUDA)
    ladder_test(${prefix}_gpu_tests GPU SOURCES ${gpu_tests} LIBS ${ARGN})
  endif()
endfunction()

# add_chapter(NAME): the chapter's folder holds main.cu, optionally kernels.cu (its hand-written kernels, built into a
# library its tests and the benchmark link too) and tests/ (cpu_*.cpp|cu are CPU tests, gpu_*.cu are GPU tests).
function(add_chapter name)
  set(dir ${CMAKE_CURRENT_SOURCE_DIR}/${name})
  set(libs ladder_chapter)
  if(EXISTS ${dir}/kernels.cu)
    add_library(${name}_kernels STATIC ${dir}/kernels.cu)
    ladder_warnings(${name}_kernels)
    target_include_directories(${name}_kernels PUBLIC ${dir})
    target_link_libraries(${name}_kernels PUBLIC ladder_gpu)
    list(APPEND libs ${name}_kernels)
  endif()
  ladder_host_only_cu(${dir}/main.cu)
  add_executable(${name} ${dir}/main.cu)
  ladder_warnings(${name})
  target_link_libraries(${name} PRIVATE ${libs})
  ladder_host_side(${name} cli)
  install(TARGETS ${name} RUNTIME DESTINATION bin)

  ladder_library_tests(${name} ${dir} ${libs})
  if(BUILD_TESTING AND EXISTS ${dir}/tests/cli.cmake)
    set(CHAPTER_EXE $<TARGET_FILE:${name}>)
    include(${dir}/tests/cli.cmake)
  endif()
endfunction()

# ladder_expect(NAME EXIT CODE REGEX COMMAND... [LABEL gpu] [ABSENT PATH]): a ctest that runs a command and checks
# its exit status and output (and, with ABSENT, that PATH, removed first, still does not exist afterwards).
function(ladder_expect test_name)
  if(NOT BUILD_TESTING)
    return()
  endif()
  cmake_parse_arguments(E "" "EXIT;REGEX;LABEL;ABSENT" "COMMAND" ${ARGN})
  if(NOT E_LABEL)
    set(E_LABEL cpu)
  endif()
  set(gpu_test 0)
  if(E_LABEL STREQUAL "gpu")
    set(gpu_test 1)
  endif()
  add_test(NAME ${test_name}
    COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=${E_EXIT} "-DEXPECT_REGEX=${E_REGEX}" "-DCMD=${E_COMMAND}"
            -DGPU_TEST=${gpu_test} "-DABSENT=${E_ABSENT}" -P ${PROJECT_SOURCE_DIR}/cmake/expect.cmake)
  if(gpu_test)
    ladder_gpu_test_properties(${test_name})
  else()
    set_tests_properties(${test_name} PROPERTIES LABELS ${E_LABEL})
  endif()
endfunction()

# ladder_chapter_trace(NAME COMMAND...): a `gpu` ctest that runs a chapter end to end, writing its trace into a folder
# of its own under the build folder, and checks the trace with ladder_check_trace (strict nesting on every lane).
function(ladder_chapter_trace test_name)
  if(NOT BUILD_TESTING)
    return()
  endif()
  cmake_parse_arguments(E "" "" "COMMAND" ${ARGN})
  add_test(NAME ${test_name}
    COMMAND ${CMAKE_COMMAND} "-DCMD=${E_COMMAND}" -DDIR=${CMAKE_BINARY_DIR}/test-traces/${test_name}
            -DCHECKER=$<TARGET_FILE:ladder_check_trace> -P ${PROJECT_SOURCE_DIR}/cmake/chapter_trace.cmake)
  ladder_gpu_test_properties(${test_name})
endfunction()
