# The chapter run by ctest, through mpirun: 2 ranks (--oversubscribe: CI machines may have fewer cores than ranks).
# As root, Open MPI wants two variables before it starts anything; locally started ranks inherit mpirun's
# environment, CUDA_VISIBLE_DEVICES= (no GPU) included.
set(root_ok ${CMAKE_COMMAND} -E env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
set(np2 ${root_ok} ${LADDER_MPIRUN} --oversubscribe -np 2)
set(nogpu_np2 ${root_ok} CUDA_VISIBLE_DEVICES= ${LADDER_MPIRUN} --oversubscribe -np 2)

function(tp_one_error test_name exit regex)
  cmake_parse_arguments(E "" "LABEL" "COMMAND" ${ARGN})
  set(gpu_test 0)
  if(E_LABEL STREQUAL "gpu")
    set(gpu_test 1)
  endif()
  add_test(NAME ${test_name}
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=${exit} "-DEXPECT_REGEX=${regex}" "-DCMD=${E_COMMAND}"
                   -DGPU_TEST=${gpu_test} -DLADDER_CMAKE_DIR=${PROJECT_SOURCE_DIR}/cmake
                   -P ${PROJECT_SOURCE_DIR}/07_tp_mlp/tests/one_error_line.cmake)
  if(gpu_test)
    ladder_gpu_test_properties(${test_name})
  else()
    set_tests_properties(${test_name} PROPERTIES LABELS cpu)
  endif()
endfunction()

# Refusals before any GPU work: the same on a machine without one, one line from rank 0, every rank non-zero.
ladder_expect(07_tp_mlp.help_describes_every_option EXIT 0
              REGEX "--batch.*--seq.*--dim.*--hidden.*--mode[^\n]*tp[^\n]*overlap.*--chunks.*--nccl-sms.*--window.*--kernel.*--nccl-timeout"
              COMMAND ${root_ok} ${CHAPTER_EXE} --help)
tp_one_error(07_tp_mlp.bad_mode 2 "error: --mode: pipeline not in \\{tp,overlap,sp\\}"
             COMMAND ${np2} ${CHAPTER_EXE} --mode pipeline)
tp_one_error(07_tp_mlp.bad_chunks 2 "error: --chunks: must be an integer from 1 to 64, got 0"
             COMMAND ${np2} ${CHAPTER_EXE} --chunks 0)
tp_one_error(07_tp_mlp.bad_nccl_sms 2 "error: --nccl-sms: must be an integer from 0 to 1024, got -1"
             COMMAND ${np2} ${CHAPTER_EXE} --nccl-sms -1)
tp_one_error(07_tp_mlp.hidden_does_not_split 2
             "error: hidden = 3073 does not split over 2 ranks: each rank takes hidden/ranks units"
             COMMAND ${nogpu_np2} ${CHAPTER_EXE} --hidden 3073)
tp_one_error(07_tp_mlp.shard_breaks_shape_rule 2
             "error: each of the 2 ranks holds hidden/ranks = 1540 units: hidden = 1540 is not a multiple of 8"
             COMMAND ${nogpu_np2} ${CHAPTER_EXE} --hidden 3080)
tp_one_error(07_tp_mlp.graph_refused 2 "error: --graph: 07_tp_mlp replays no CUDA graph"
             COMMAND ${nogpu_np2} ${CHAPTER_EXE} --graph)
tp_one_error(07_tp_mlp.ranks_disagree 2 "error: the ranks were started with different arguments"
             COMMAND ${root_ok} ${LADDER_MPIRUN} --oversubscribe -np 1 ${CHAPTER_EXE} --seed 1 : -np 1 ${CHAPTER_EXE}
                     --seed 2)
tp_one_error(07_tp_mlp.no_gpu 2 "error: no CUDA GPU was found" COMMAND ${nogpu_np2} ${CHAPTER_EXE})

# On the GPUs (label gpu): every mode checked on every rank against the CPU and against each other, at odd shapes
# (15 rows in 4 chunks, the last one short; 8 rows a rank in sp, the last one padded) and at the blog's; each rank's
# trace as torch writes it.
foreach(shape "--batch 3 --seq 5 --dim 64 --hidden 208 --chunks 4 --seed 1"
              "--batch 64 --seq 128 --dim 768 --hidden 3072")
  separate_arguments(args UNIX_COMMAND "${shape} --check-only")
  string(REGEX REPLACE "^--batch ([0-9]+) --seq ([0-9]+) .*" "b\\1_s\\2" tag "${shape}")
  ladder_expect(07_tp_mlp.np2_check_${tag} EXIT 0 LABEL gpu
                REGEX "check \\(tp\\): .*check \\(overlap\\): .*check \\(sp\\): .*sp's y against tp's: .*every rank passed the same checks"
                COMMAND ${np2} ${CHAPTER_EXE} ${args})
endforeach()
# NCCL windows and SMs left to NCCL: the same checks (NCCL's symmetric kernels sum in float32, so the ranks' y is
# another bf16 rounding of the sum, the same on every rank).
ladder_expect(07_tp_mlp.np2_check_window EXIT 0 LABEL gpu
              REGEX "NCCL windows.*check \\(tp\\): .*check \\(overlap\\): .*check \\(sp\\): .*every rank passed the same checks"
              COMMAND ${np2} ${CHAPTER_EXE} --batch 3 --seq 5 --dim 64 --hidden 208 --chunks 4 --seed 1 --window
                      --nccl-sms 16 --check-only)
# More SMs for NCCL than the GPU has: one line before NCCL starts.
tp_one_error(07_tp_mlp.nccl_sms_too_many 2 "error: --nccl-sms 1024: the GPU has [0-9]+ SMs" LABEL gpu
             COMMAND ${np2} ${CHAPTER_EXE} --nccl-sms 1024 --check-only --batch 3 --seq 5 --dim 64 --hidden 208)
foreach(mode tp overlap sp)
  add_test(NAME 07_tp_mlp.np2_trace_${mode}
           COMMAND ${CMAKE_COMMAND} "-DCMD=${np2};${CHAPTER_EXE};--batch;3;--seq;5;--dim;64;--hidden;208;--mode;${mode}"
                   -DDIR=${CMAKE_BINARY_DIR}/test-traces/07_tp_mlp.np2_trace_${mode} -DRANKS=2 -DMODE=${mode}
                   -DCHECKER=$<TARGET_FILE:ladder_check_trace> -DLADDER_CMAKE_DIR=${PROJECT_SOURCE_DIR}/cmake
                   -P ${PROJECT_SOURCE_DIR}/07_tp_mlp/tests/rank_traces.cmake)
  ladder_gpu_test_properties(07_tp_mlp.np2_trace_${mode})
endforeach()
# The same with the all-reduces in NCCL windows: NCCL's symmetric kernel (ncclSymkDevKernel_AllReduce_*) in the trace,
# carrying the collective's args like the ring's.
add_test(NAME 07_tp_mlp.np2_trace_overlap_window
         COMMAND ${CMAKE_COMMAND}
                 "-DCMD=${np2};${CHAPTER_EXE};--batch;3;--seq;5;--dim;64;--hidden;208;--mode;overlap;--window;--nccl-sms;16"
                 -DDIR=${CMAKE_BINARY_DIR}/test-traces/07_tp_mlp.np2_trace_overlap_window -DRANKS=2 -DMODE=overlap_window
                 -DCHECKER=$<TARGET_FILE:ladder_check_trace> -DLADDER_CMAKE_DIR=${PROJECT_SOURCE_DIR}/cmake
                 -P ${PROJECT_SOURCE_DIR}/07_tp_mlp/tests/rank_traces.cmake)
ladder_gpu_test_properties(07_tp_mlp.np2_trace_overlap_window)
# A machine with one GPU: both ranks would take it, and the chapter says so; that is a skip, like no GPU at all.
foreach(t np2_check_b3_s5 np2_check_b64_s128 np2_check_window nccl_sms_too_many np2_trace_tp np2_trace_overlap
          np2_trace_sp np2_trace_overlap_window)
  set_tests_properties(07_tp_mlp.${t} PROPERTIES SKIP_REGULAR_EXPRESSION "no CUDA GPU was found;would share one GPU")
endforeach()
# NCCL failing: with no network interface it may use (NCCL_SOCKET_IFNAME names none), it cannot bootstrap, and rank
# 0, which makes the ncclUniqueId, says so. One line, every rank non-zero, no hang.
tp_one_error(07_tp_mlp.nccl_fails nonzero "error: rank 0: NCCL error: .*ncclGetUniqueId" LABEL gpu
             COMMAND ${root_ok} NCCL_SOCKET_IFNAME=ladder_no_such_interface ${LADDER_MPIRUN} --oversubscribe -np 2
                     ${CHAPTER_EXE} --check-only --batch 3 --seq 5 --dim 64 --hidden 208)
# On one GPU the two ranks stop before NCCL, at the shared GPU: a skip, as for the runs above (it failed there, on a
# one-GPU H100 machine, with that line in place of NCCL's).
set_tests_properties(07_tp_mlp.nccl_fails PROPERTIES SKIP_REGULAR_EXPRESSION "no CUDA GPU was found;would share one GPU")
