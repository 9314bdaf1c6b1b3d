# The chapter run by ctest, through mpirun: 2 ranks (--oversubscribe: CI machines may have fewer cores than ranks).
# As root, Open MPI wants two variables before it starts anything; locally started ranks inherit mpirun's
# environment, CUDA_VISIBLE_DEVICES= (no GPU) included. NCCL_NVLS_ENABLE=0: no NVLink multicast (NVLS) objects.
set(root_ok ${CMAKE_COMMAND} -E env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0)
set(np2 ${root_ok} ${LADDER_MPIRUN} --oversubscribe -np 2)
set(nogpu_np2 ${root_ok} CUDA_VISIBLE_DEVICES= ${LADDER_MPIRUN} --oversubscribe -np 2)

function(tp_one_error test_name exit regex)
  cmake_parse_arguments(E "" "LABEL" "COMMAND" ${ARGN})
  ladder_no_stray_arguments(tp_one_error ${test_name} ${E_UNPARSED_ARGUMENTS})
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
              REGEX "--batch.*--seq.*--dim.*--hidden.*--mode[^\n]*tp[^\n]*overlap.*--chunks.*--nccl-sms.*--window.*--kernel.*--timeout"
              COMMAND ${root_ok} ${CHAPTER_EXE} --help)
tp_one_error(07_tp_mlp.bad_mode 2 "error: --mode: pipeline not in \\{tp,overlap,sp,fused\\}"
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
  # --mode fused adds its forward to the checks: for two ranks, the very bits of sp's.
  ladder_expect(07_tp_mlp.np2_fused_check_${tag} EXIT 0 LABEL gpu
                REGEX "check \\(sp\\): .*check \\(fused\\): .*fused's y against sp's: 0 of .*every rank passed the same checks"
                COMMAND ${np2} ${CHAPTER_EXE} ${args} --mode fused)
endforeach()
# One rank (label gpu: one GPU is enough): fused's path through NCCL's device API with itself as the only peer: the
# window, the LSA pointer, the down GEMM writing through it, the barriers and the reduction, checked against the CPU
# and against sp.
foreach(shape "--batch 3 --seq 5 --dim 64 --hidden 208 --seed 1" "--batch 64 --seq 128 --dim 768 --hidden 3072")
  separate_arguments(args UNIX_COMMAND "${shape} --check-only --mode fused")
  string(REGEX REPLACE "^--batch ([0-9]+) --seq ([0-9]+) .*" "b\\1_s\\2" tag "${shape}")
  ladder_expect(07_tp_mlp.np1_fused_check_${tag} EXIT 0 LABEL gpu
                REGEX "check \\(sp\\): [^\n]*\ncheck \\(fused\\): [^\n]*\n.*fused's y against sp's: 0 of .*every rank passed the same checks"
                COMMAND ${root_ok} ${LADDER_MPIRUN} --oversubscribe -np 1 ${CHAPTER_EXE} ${args})
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
foreach(mode tp overlap sp fused)
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
# fused's trace on one rank: the reduction kernel inside record_param_comms { nccl:_reduce_scatter_base }, with its args.
add_test(NAME 07_tp_mlp.np1_trace_fused
         COMMAND ${CMAKE_COMMAND}
                 "-DCMD=${root_ok};${LADDER_MPIRUN};--oversubscribe;-np;1;${CHAPTER_EXE};--batch;3;--seq;5;--dim;64;--hidden;208;--mode;fused"
                 -DDIR=${CMAKE_BINARY_DIR}/test-traces/07_tp_mlp.np1_trace_fused -DRANKS=1 -DMODE=fused
                 -DCHECKER=$<TARGET_FILE:ladder_check_trace> -DLADDER_CMAKE_DIR=${PROJECT_SOURCE_DIR}/cmake
                 -P ${PROJECT_SOURCE_DIR}/07_tp_mlp/tests/rank_traces.cmake)
ladder_gpu_test_properties(07_tp_mlp.np1_trace_fused)
# A machine with one GPU: both ranks would take it, and the chapter says so; that is a skip, like no GPU at all. The
# label two_gpus marks every test that needs two.
foreach(t np2_check_b3_s5 np2_check_b64_s128 np2_fused_check_b3_s5 np2_fused_check_b64_s128 np2_check_window nccl_sms_too_many np2_trace_tp np2_trace_overlap
          np2_trace_sp np2_trace_fused np2_trace_overlap_window)
  set_tests_properties(07_tp_mlp.${t} PROPERTIES LABELS "gpu;two_gpus"
                                                 SKIP_REGULAR_EXPRESSION "no CUDA GPU was found;would share one GPU")
endforeach()
# NCCL failing: with no network interface it may use (NCCL_SOCKET_IFNAME names none), it cannot bootstrap, and rank
# 0, which makes the ncclUniqueId, says so. One line, every rank non-zero, no hang.
tp_one_error(07_tp_mlp.nccl_fails nonzero "error: stage \"nccl-id\": rank 0: NCCL error: .*ncclGetUniqueId" LABEL gpu
             COMMAND ${root_ok} NCCL_SOCKET_IFNAME=ladder_no_such_interface ${LADDER_MPIRUN} --oversubscribe -np 2
                     ${CHAPTER_EXE} --check-only --batch 3 --seq 5 --dim 64 --hidden 208)
# On one GPU the two ranks stop before NCCL, at the shared GPU: a skip, as for the runs above (it failed there, on a
# one-GPU H100 machine, with that line in place of NCCL's).
set_tests_properties(07_tp_mlp.nccl_fails PROPERTIES LABELS "gpu;two_gpus"
                                                    SKIP_REGULAR_EXPRESSION "no CUDA GPU was found;would share one GPU")

# The failure protocol (stage.h): LADDER_07_FAULT=STAGE:RANK:KIND makes one rank throw, stall or exit at the start of
# a stage. Whatever the fault, every rank ends within the deadline (--timeout) plus a few seconds, with the exit status
# expected and the lines expected: a throw, which every rank hears of in agree(), one line from rank 0; a stall, one
# line from the rank that waited or stalled past the deadline and one from the rank mpirun then stopped; an exit, one
# line from the rank mpirun stopped (the rank that exited says nothing, as a crash would; mpirun names it).
function(tp_fault test_name fault exit max_s)
  cmake_parse_arguments(F "" "LABEL;LINE0;LINE1;EACH" "COMMAND" ${ARGN})
  ladder_no_stray_arguments(tp_fault ${test_name} ${F_UNPARSED_ARGUMENTS})
  set(gpu_test 0)
  if(F_LABEL STREQUAL "gpu")
    set(gpu_test 1)
  endif()
  add_test(NAME ${test_name}
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=${exit} -DMAX_SECONDS=${max_s} "-DLINE0=${F_LINE0}"
                   "-DLINE1=${F_LINE1}" "-DEACH=${F_EACH}" "-DCMD=${root_ok};LADDER_07_FAULT=${fault};${F_COMMAND}"
                   -DGPU_TEST=${gpu_test} -DLADDER_CMAKE_DIR=${PROJECT_SOURCE_DIR}/cmake
                   -P ${PROJECT_SOURCE_DIR}/07_tp_mlp/tests/fault.cmake)
  if(gpu_test)
    set_tests_properties(${test_name} PROPERTIES LABELS "gpu;two_gpus"
                                                 SKIP_REGULAR_EXPRESSION "no CUDA GPU was found;would share one GPU")
  else()
    set_tests_properties(${test_name} PROPERTIES LABELS cpu)
  endif()
endfunction()

# On the CPU (no GPU: the ranks fail at the GPU, after the stages tried here): a stage of local work (refusals) and one
# whose cross-rank step is an MPI exchange (arguments), each rank failing once. --timeout 2: the runs end in ~4-8 s.
set(cpu_run CUDA_VISIBLE_DEVICES= ${LADDER_MPIRUN} --oversubscribe -np 2 ${CHAPTER_EXE} --timeout 2)
set(stopped "was stopped by mpirun \\(SIGTERM\\): another rank ended first")
tp_fault(07_tp_mlp.fault_refusals_throw refusals:1:throw 1 20 COMMAND ${cpu_run}
         LINE0 "error: stage \"refusals\": rank 1: the fault injected by LADDER_07_FAULT \\(refusals:1:throw\\)$")
tp_fault(07_tp_mlp.fault_refusals_stall refusals:1:stall 3 20 COMMAND ${cpu_run}
         LINE0 "error: stage \"refusals\": rank 1 did not finish it within 2 s \\(--timeout\\)"
         LINE1 "error: stage \"refusals\": rank 0 ${stopped}")
tp_fault(07_tp_mlp.fault_refusals_exit refusals:1:exit 1 20 COMMAND ${cpu_run}
         LINE0 "error: stage \"refusals\": rank 0 ${stopped}")
tp_fault(07_tp_mlp.fault_arguments_throw arguments:0:throw 1 20 COMMAND ${cpu_run}
         LINE0 "error: stage \"arguments\": rank 0: the fault injected by LADDER_07_FAULT \\(arguments:0:throw\\)$")
# Rank 0 stalls before it reads --timeout: its own watchdog still has the default 60 s, and rank 1, which read
# --timeout 2, waits 2 + 4 s for it in agree().
tp_fault(07_tp_mlp.fault_arguments_stall arguments:0:stall 3 20 COMMAND ${cpu_run}
         LINE0 "error: stage \"arguments\": rank 1 waited 6 s for rank 0, which did not reach the end of the stage"
         LINE1 "error: stage \"arguments\": rank 0 ${stopped}")
tp_fault(07_tp_mlp.fault_arguments_exit arguments:0:exit 1 20 COMMAND ${cpu_run}
         LINE0 "error: stage \"arguments\": rank 1 ${stopped}")
tp_one_error(07_tp_mlp.fault_unknown_stage 2 "error: LADDER_07_FAULT: no stage \"nowhere\" \\(the stages: arguments, "
             COMMAND ${root_ok} LADDER_07_FAULT=nowhere:1:throw ${cpu_run})
tp_one_error(07_tp_mlp.fault_malformed 2
             "error: LADDER_07_FAULT: expected STAGE:RANK:throw\\|stall\\|exit, got \"refusals:one:throw\""
             COMMAND ${root_ok} LADDER_07_FAULT=refusals:one:throw ${cpu_run})

# On two GPUs (label gpu; a skip on one): the stages whose cross-rank step is NCCL's (its init, the registration of
# NCCL windows, the forwards' collectives, the timed runs' event waits) and an MPI exchange after them (compare).
set(gpu_run ${LADDER_MPIRUN} --oversubscribe -np 2 ${CHAPTER_EXE} --batch 3 --seq 5 --dim 64 --hidden 208 --timeout 5
            --trace-dir ${CMAKE_BINARY_DIR}/test-traces/07_tp_mlp.faults)
set(any_line "error: stage \"STAGE\": rank [01] ")
foreach(s nccl-init forwards)
  # A throw before the collective: the other rank's NCCL wait passes the deadline, it aborts its communicator, and
  # agree() reports the rank that threw.
  tp_fault(07_tp_mlp.fault_${s}_throw ${s}:1:throw 1 40 LABEL gpu COMMAND ${gpu_run} --check-only
           LINE0 "error: stage \"${s}\": rank 1: the fault injected by LADDER_07_FAULT \\(${s}:1:throw\\)$")
endforeach()
foreach(case "nccl-init;stall;3;--check-only" "nccl-init;exit;1;--check-only"
        "comm-buffers;stall;3;--check-only;--window" "forwards;stall;3;--check-only" "forwards;exit;1;--check-only"
        "compare;stall;3;--check-only" "timing;stall;3" "timing;exit;1")
  list(POP_FRONT case s kind exit)
  string(REPLACE "STAGE" "${s}" named "${any_line}")
  if(kind STREQUAL "stall")
    # One or two lines, each naming the stage and a rank: the rank that stalled past the deadline (its watchdog) or
    # the one that waited for it (a polled wait), and perhaps the rank mpirun then stopped. Exactly one says why.
    tp_fault(07_tp_mlp.fault_${s}_${kind} ${s}:1:${kind} ${exit} 60 LABEL gpu COMMAND ${gpu_run} ${case}
             EACH "${named}(did not finish it within 5 s|waited [0-9]+ s for rank [01]|${stopped})"
             LINE0 "${named}(did not finish it within 5 s|waited [0-9]+ s for rank [01])")
  else()
    tp_fault(07_tp_mlp.fault_${s}_${kind} ${s}:1:${kind} ${exit} 60 LABEL gpu COMMAND ${gpu_run} ${case}
             LINE0 "${named}${stopped}")
  endif()
endforeach()
