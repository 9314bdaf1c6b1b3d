# Shared build settings and the one helper that adds a chapter.

# Warnings for host code, whether g++ sees it directly or through nvcc.
function(ladder_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr -lineinfo>)
endfunction()

# ladder_test(NAME SOURCES... [GPU]): a GoogleTest binary beside what it tests. GPU tests call GTEST_SKIP() without a
# device and carry the ctest label `gpu`, so `ctest -L gpu` on a GPU machine runs exactly them.
function(ladder_test name)
  cmake_parse_arguments(T "GPU" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  ladder_warnings(${name})
  target_link_libraries(${name} PRIVATE ladder_common ${T_LIBS} GTest::gtest GTest::gtest_main)
  if(T_GPU)
    gtest_discover_tests(${name} PROPERTIES LABELS gpu DISCOVERY_TIMEOUT 60)
  else()
    gtest_discover_tests(${name} PROPERTIES LABELS cpu DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# add_chapter(NAME): the chapter's folder holds main.cu, optionally kernels.cu (its hand-written kernels, built into a
# library its tests and the benchmark link too) and tests/ (cpu_*.cpp|cu are CPU tests, gpu_*.cu are GPU tests).
function(add_chapter name)
  set(dir ${CMAKE_CURRENT_SOURCE_DIR}/${name})
  set(libs ladder_common)
  if(EXISTS ${dir}/kernels.cu)
    add_library(${name}_kernels STATIC ${dir}/kernels.cu)
    ladder_warnings(${name}_kernels)
    target_include_directories(${name}_kernels PUBLIC ${dir})
    target_link_libraries(${name}_kernels PUBLIC ladder_common)
    list(APPEND libs ${name}_kernels)
  endif()
  add_executable(${name} ${dir}/main.cu)
  ladder_warnings(${name})
  target_link_libraries(${name} PRIVATE ${libs})
  # Runs write their traces under <source>/traces unless --trace-dir says otherwise.
  target_compile_definitions(${name} PRIVATE LADDER_CHAPTER="${name}")
  install(TARGETS ${name} RUNTIME DESTINATION bin)

  file(GLOB cpu_tests CONFIGURE_DEPENDS ${dir}/tests/cpu_*.cpp ${dir}/tests/cpu_*.cu)
  file(GLOB gpu_tests CONFIGURE_DEPENDS ${dir}/tests/gpu_*.cu ${dir}/tests/gpu_*.cpp)
  if(cpu_tests)
    ladder_test(${name}_cpu_tests SOURCES ${cpu_tests} LIBS ${libs})
  endif()
  if(gpu_tests)
    ladder_test(${name}_gpu_tests GPU SOURCES ${gpu_tests} LIBS ${libs})
  endif()
  if(EXISTS ${dir}/tests/cli.cmake)
    set(CHAPTER_EXE $<TARGET_FILE:${name}>)
    include(${dir}/tests/cli.cmake)
  endif()
endfunction()

# ladder_expect(NAME EXIT CODE REGEX COMMAND...): a ctest that runs a command and checks its exit status and output.
function(ladder_expect test_name)
  cmake_parse_arguments(E "" "EXIT;REGEX;LABEL" "COMMAND" ${ARGN})
  if(NOT E_LABEL)
    set(E_LABEL cpu)
  endif()
  add_test(NAME ${test_name}
    COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=${E_EXIT} "-DEXPECT_REGEX=${E_REGEX}" "-DCMD=${E_COMMAND}"
            -P ${PROJECT_SOURCE_DIR}/cmake/expect.cmake)
  set_tests_properties(${test_name} PROPERTIES LABELS ${E_LABEL})
  if(E_LABEL STREQUAL "gpu")
    # Like the GoogleTest GPU tests, a GPU test of a command reports "skipped" on a machine without a GPU.
    set_tests_properties(${test_name} PROPERTIES SKIP_REGULAR_EXPRESSION "no CUDA GPU was found")
  endif()
endfunction()
