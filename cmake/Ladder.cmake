# Shared build settings and the helpers that add a library's tests and a chapter.

# Warnings for host code, whether g++ sees it directly or through nvcc.
function(ladder_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
endfunction()

# Optimization: everything a reader runs or times (the chapters, ladder-trace, the benchmarks and every library they
# link, kernels included) compiles at the build type's level, -O3 in Release (the default preset). Only the tests' own
# files (GoogleTest binaries and the test-only tools) compile at LADDER_TEST_OPT, -O0 unless told otherwise: a test file
# compiles in half the time (cpu_json_test.cpp: 11 s at -O0, 22 s at -O3 on a busy 2-core machine), and the code under
# test is the libraries', at -O3.
set(LADDER_TEST_OPT "-O0" CACHE STRING "optimization flag for the tests' own files (the libraries they test keep -O3)")
function(ladder_test_optimization target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${LADDER_TEST_OPT}>)
endfunction()

# No precompiled headers: measured on a 2-core machine, building one for CLI11 and fmt (or GoogleTest, fmt and
# nlohmann-json) and the empty file CMake compiles with it cost more than it saved in the files that use it, since most
# of a CLI11 file's time at -O3 goes to code generation (its validators are objects defined in the header), not to
# parsing.

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
  add_executable(${name} ${T_SOURCES})
  ladder_warnings(${name})
  ladder_test_optimization(${name})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE LADDER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  # The test list is read when ctest runs (PRE_TEST), not by running each test binary at the end of the build.
  if(T_GPU)
    gtest_discover_tests(${name} PROPERTIES LABELS gpu DISCOVERY_TIMEOUT 60 DISCOVERY_MODE PRE_TEST)
  else()
    gtest_discover_tests(${name} PROPERTIES LABELS cpu DISCOVERY_TIMEOUT 60 DISCOVERY_MODE PRE_TEST)
  endif()
endfunction()

# ladder_library_tests(PREFIX DIR LIBS...): DIR/tests/cpu_*.cpp become PREFIX_cpu_tests, DIR/tests/gpu_*.cpp
# PREFIX_gpu_tests (those only with CUDA). Test files are host code; a test's kernels live in a .cu of a library.
function(ladder_library_tests prefix dir)
  file(GLOB cpu_tests CONFIGURE_DEPENDS ${dir}/tests/cpu_*.cpp)
  file(GLOB gpu_tests CONFIGURE_DEPENDS ${dir}/tests/gpu_*.cpp)
  if(cpu_tests)
    ladder_test(${prefix}_cpu_tests SOURCES ${cpu_tests} LIBS ${ARGN})
  endif()
  if(gpu_tests AND LADDER_HAVE_CUDA)
    ladder_test(${prefix}_gpu_tests GPU SOURCES ${gpu_tests} LIBS ${ARGN})
  endif()
endfunction()

# add_chapter(NAME [KERNELS SOURCES...] [SM90A_KERNELS SOURCES...] [TEST_LIBS LIBS...]), called from the chapter's
# own CMakeLists.txt: the executable NAME from main.cpp (host code), placed in the build folder's top (build/NAME);
# KERNELS: the chapter's hand-written kernels (.cu), built for CMAKE_CUDA_ARCHITECTURES into the library NAME_kernels,
# which the chapter, its tests and the benchmarks link; SM90A_KERNELS: kernels that exist only in the sm_90a target
# (wgmma, TMA, setmaxnreg), built for sm_90a alone into NAME_sm90a, which NAME_kernels links, and only when
# CMAKE_CUDA_ARCHITECTURES include 90; NAME_kernels then compiles with LADDER_HAVE_SM90A=1 (else 0), and the chapter's
# tests/cli.cmake sees LADDER_HAVE_SM90A too. tests/: cpu_*.cpp and gpu_*.cpp become NAME_cpu_tests and NAME_gpu_tests,
# linked with TEST_LIBS too, and tests/cli.cmake (if any) adds the ctests that run the chapter (as ${CHAPTER_EXE}).
# A chapter's own op's FLOP and byte formula, for its report and ladder-trace, is in common/work (work/ladder_ops.h).
# Headers are included by folder from the repository root: "03_fused_mlp/kernels.cuh".
# Whether CMAKE_CUDA_ARCHITECTURES include Hopper: 90 in any spelling (90, 90a, 90-real, 90-virtual), "all",
# "all-major", or "native" on a machine whose GPU is one.
function(ladder_cuda_has_90 out)
  set(archs "${CMAKE_CUDA_ARCHITECTURES}")
  if(archs STREQUAL "native")
    set(archs "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
  endif()
  set(has 0)
  foreach(a IN LISTS archs)
    if(a MATCHES "^(90[a-z]?(-real|-virtual)?|all|all-major)$")
      set(has 1)
    endif()
  endforeach()
  set(${out} ${has} PARENT_SCOPE)
endfunction()

function(add_chapter name)
  cmake_parse_arguments(C "" "" "KERNELS;SM90A_KERNELS;TEST_LIBS" ${ARGN})
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT LADDER_HAVE_CUDA)
    return()
  endif()
  set(libs ladder_chapter)
  set(LADDER_HAVE_SM90A 0)
  if(C_KERNELS)
    add_library(${name}_kernels STATIC ${C_KERNELS})
    ladder_warnings(${name}_kernels)
    target_include_directories(${name}_kernels PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name}_kernels PUBLIC ladder_gpu)
    ladder_cuda_has_90(has_90)
    if(C_SM90A_KERNELS AND has_90)
      # The flag by hand: CMake 3.22 has no "90a" architecture name (and plain -arch=sm_90a also emits compute_90 PTX,
      # which ptxas rejects).
      # Their objects join NAME_kernels: one library, whose host code calls theirs and theirs its.
      add_library(${name}_sm90a OBJECT ${C_SM90A_KERNELS})
      ladder_warnings(${name}_sm90a)
      set_target_properties(${name}_sm90a PROPERTIES CUDA_ARCHITECTURES OFF)
      target_compile_options(${name}_sm90a PRIVATE "SHELL:-gencode arch=compute_90a,code=sm_90a")
      target_include_directories(${name}_sm90a PRIVATE ${PROJECT_SOURCE_DIR})
      target_link_libraries(${name}_sm90a PRIVATE ladder_gpu)
      target_sources(${name}_kernels PRIVATE $<TARGET_OBJECTS:${name}_sm90a>)
      set(LADDER_HAVE_SM90A 1)
    endif()
    if(C_SM90A_KERNELS)
      target_compile_definitions(${name}_kernels PUBLIC LADDER_HAVE_SM90A=${LADDER_HAVE_SM90A})
    endif()
    list(APPEND libs ${name}_kernels)
  endif()
  add_executable(${name} ${dir}/main.cpp)
  ladder_warnings(${name})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PRIVATE ${libs})
  install(TARGETS ${name} RUNTIME DESTINATION bin)

  ladder_library_tests(${name} ${dir} ${libs} ${C_TEST_LIBS})
  if(BUILD_TESTING AND EXISTS ${dir}/tests/cli.cmake)
    set(CHAPTER_EXE $<TARGET_FILE:${name}>)
    include(${dir}/tests/cli.cmake)
  endif()
endfunction()

# ladder_no_stray_arguments(FUNCTION TEST_NAME [ARGS...]): stops the configure when a test helper was given arguments
# it does not take. Most often a quoted argument with a `;` in it, which CMake splits into a list: only its first part
# would reach the keyword, and the test would check less than it says.
function(ladder_no_stray_arguments fn test_name)
  if(ARGN)
    message(FATAL_ERROR "${fn}(${test_name}): unexpected arguments '${ARGN}' (a ; inside a quoted argument splits it; "
                        "write . in a regex instead)")
  endif()
endfunction()

# ladder_same_output(TEST_NAME A B ARGS... [B_ARGS...] [B_ENV VAR=VALUE...] [SKIP REGEX]): a `gpu` ctest that runs the
# chapters A and B with the same arguments (B with B_ARGS after them, in the environment B_ENV) and checks they print
# the same output checksum (cmake/same_output.cmake). SKIP: the skip regex, if it is not the plain no-GPU one.
function(ladder_same_output test_name a b)
  if(NOT BUILD_TESTING OR NOT LADDER_HAVE_CUDA)
    return()
  endif()
  cmake_parse_arguments(S "" "SKIP" "ARGS;B_ARGS;B_ENV" ${ARGN})
  ladder_no_stray_arguments(ladder_same_output ${test_name} ${S_UNPARSED_ARGUMENTS})
  set(run_b $<TARGET_FILE:${b}>)
  if(S_B_ENV)
    set(run_b ${CMAKE_COMMAND} -E env ${S_B_ENV} $<TARGET_FILE:${b}>)
  endif()
  add_test(NAME ${test_name}
           COMMAND ${CMAKE_COMMAND} "-DCMD_A=$<TARGET_FILE:${a}>;${S_ARGS}" "-DCMD_B=${run_b};${S_ARGS};${S_B_ARGS}"
                   -P ${PROJECT_SOURCE_DIR}/cmake/same_output.cmake)
  ladder_gpu_test_properties(${test_name})
  if(S_SKIP)  # besides the no-GPU skip, not instead of it
    set_tests_properties(${test_name} PROPERTIES SKIP_REGULAR_EXPRESSION "no CUDA GPU was found;${S_SKIP}")
  endif()
endfunction()

# ladder_expect(NAME EXIT CODE REGEX COMMAND... [LABEL gpu] [ABSENT PATH]): a ctest that runs a command and checks
# its exit status and output (and, with ABSENT, that PATH, removed first, still does not exist afterwards).
function(ladder_expect test_name)
  if(NOT BUILD_TESTING)
    return()
  endif()
  cmake_parse_arguments(E "" "EXIT;REGEX;LABEL;ABSENT" "COMMAND" ${ARGN})
  ladder_no_stray_arguments(ladder_expect ${test_name} ${E_UNPARSED_ARGUMENTS})
  if(E_REGEX STREQUAL "")
    message(FATAL_ERROR "ladder_expect(${test_name}): REGEX is empty, and an empty regex matches any output")
  endif()
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
  ladder_no_stray_arguments(ladder_chapter_trace ${test_name} ${E_UNPARSED_ARGUMENTS})
  add_test(NAME ${test_name}
    COMMAND ${CMAKE_COMMAND} "-DCMD=${E_COMMAND}" -DDIR=${CMAKE_BINARY_DIR}/test-traces/${test_name}
            -DCHECKER=$<TARGET_FILE:ladder_check_trace> -P ${PROJECT_SOURCE_DIR}/cmake/chapter_trace.cmake)
  ladder_gpu_test_properties(${test_name})
endfunction()

# ladder_sanitizer_tests(NAME [SKIP REGEX] COMMAND...): three ctests, NAME.memcheck, NAME.racecheck and NAME.synccheck
# (label `sanitizer`), that run the command under compute-sanitizer's tools and fail on any error
# (cmake/sanitizer.cmake). Skipped without compute-sanitizer or without a GPU, failed there under LADDER_REQUIRE_GPU=1;
# skipped too where the command's output matches REGEX (a GPU it cannot run on).
function(ladder_sanitizer_tests test_name)
  if(NOT BUILD_TESTING OR NOT LADDER_HAVE_CUDA)
    return()
  endif()
  cmake_parse_arguments(E "" "SKIP" "COMMAND" ${ARGN})
  ladder_no_stray_arguments(ladder_sanitizer_tests ${test_name} ${E_UNPARSED_ARGUMENTS})
  set(skip "no CUDA GPU was found;compute-sanitizer was not found")
  if(E_SKIP)
    list(APPEND skip "${E_SKIP}")
  endif()
  find_program(LADDER_COMPUTE_SANITIZER compute-sanitizer HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)
  set(sanitizer "${LADDER_COMPUTE_SANITIZER}")
  if(NOT sanitizer)
    set(sanitizer "")
  endif()
  foreach(tool memcheck racecheck synccheck)
    add_test(NAME ${test_name}.${tool}
             COMMAND ${CMAKE_COMMAND} "-DCMD=${E_COMMAND}" -DTOOL=${tool} "-DSANITIZER=${sanitizer}"
                     -P ${PROJECT_SOURCE_DIR}/cmake/sanitizer.cmake)
    set_tests_properties(${test_name}.${tool} PROPERTIES LABELS sanitizer SKIP_REGULAR_EXPRESSION "${skip}")
  endforeach()
endfunction()

# ladder_static_libstdcxx_compiler(OUT): for a library that Python loads, which must use the process's libstdc++
# (cmake/shared_libstdcxx.cmake says why): OUT is a one-line reason when the C++ compiler or nvcc's host compiler finds
# no shared libstdc++ to link (a wrapper whose -B path holds only libstdc++.a does that), else empty.
function(ladder_static_libstdcxx_compiler out)
  set(compilers ${CMAKE_CXX_COMPILER})
  if(CMAKE_CUDA_HOST_COMPILER)
    list(APPEND compilers ${CMAKE_CUDA_HOST_COMPILER})
  endif()
  list(REMOVE_DUPLICATES compilers)
  set(why "")
  foreach(cc IN LISTS compilers)
    execute_process(COMMAND ${cc} -print-file-name=libstdc++.so OUTPUT_VARIABLE so OUTPUT_STRIP_TRAILING_WHITESPACE
                    ERROR_QUIET)
    if(NOT why AND (NOT IS_ABSOLUTE "${so}" OR NOT EXISTS "${so}"))
      set(why "a compiler that links the shared libstdc++, and ${cc} finds none (-print-file-name=libstdc++.so "
              "prints '${so}'): configure a fresh build folder with -DCMAKE_CXX_COMPILER=/usr/bin/g++")
    endif()
  endforeach()
  set(${out} "${why}" PARENT_SCOPE)
endfunction()

# ladder_add_torch_ops(SOURCES... LIBS...): a chapter after 05 adds its PyTorch ops to chapter 05's op library
# (ladder_torch_ops, built with -DLADDER_TORCH=ON): its C++ files (TORCH_LIBRARY_FRAGMENT(ladder, ...)) are compiled
# into it and its kernel libraries linked. The chapter names 05's library, never the other way round: 05 collects
# what was added before its own folder is read, and a call after that adds to the library directly.
function(ladder_add_torch_ops)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  list(TRANSFORM T_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  if(TARGET ladder_torch_ops)
    target_sources(ladder_torch_ops PRIVATE ${T_SOURCES})
    target_link_libraries(ladder_torch_ops PRIVATE ${T_LIBS})
  else()
    set_property(GLOBAL APPEND PROPERTY ladder_torch_ops_sources ${T_SOURCES})
    set_property(GLOBAL APPEND PROPERTY ladder_torch_ops_libs ${T_LIBS})
  endif()
endfunction()

# ladder_python_loaded(TARGET): TARGET is a shared library that Python loads; after every link, check that it needs
# libstdc++.so.6 and defines no std:: facet id (readelf -d, nm -D), and fail the build otherwise.
function(ladder_python_loaded target)
  find_program(LADDER_READELF readelf REQUIRED)
  find_program(LADDER_NM nm REQUIRED)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DLIB=$<TARGET_FILE:${target}> -DREADELF=${LADDER_READELF} -DNM=${LADDER_NM}
            -P ${PROJECT_SOURCE_DIR}/cmake/shared_libstdcxx.cmake
    VERBATIM)
endfunction()

# ladder_check_binaries(): the ctest build.binaries (cmake/binaries.cmake) over every executable and shared library of
# the project, found by walking the directories' targets; called once, at the end of the top CMakeLists.txt.
function(ladder_binary_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  set(found "")
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$")
      list(APPEND found ${t})
    endif()
  endforeach()
  foreach(sub IN LISTS subdirs)
    ladder_binary_targets(${sub} more)
    list(APPEND found ${more})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(ladder_check_binaries)
  if(NOT BUILD_TESTING)
    return()
  endif()
  ladder_binary_targets(${PROJECT_SOURCE_DIR} targets)
  set(content "")
  foreach(t IN LISTS targets)
    string(APPEND content "$<TARGET_FILE:${t}>\n")
  endforeach()
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/binaries.txt CONTENT "${content}")
  find_program(LADDER_READELF readelf REQUIRED)
  find_program(LADDER_NM nm REQUIRED)
  add_test(NAME build.binaries
           COMMAND ${CMAKE_COMMAND} -DLIST=${PROJECT_BINARY_DIR}/binaries.txt -DREADELF=${LADDER_READELF}
                   -DNM=${LADDER_NM} -P ${PROJECT_SOURCE_DIR}/cmake/binaries.cmake)
  set_tests_properties(build.binaries PROPERTIES LABELS cpu)
endfunction()
