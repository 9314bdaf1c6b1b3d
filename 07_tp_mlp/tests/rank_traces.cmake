# Runs CMD (an mpirun line writing its traces under DIR), then checks the run's folder the way a reader of PyTorch's
# traces would find it: one rank<r>.<ns>.pt.trace.json and one rank<r>.txt per rank (RANKS), one stamp shared by all,
# each trace passing the strict checker (CHECKER: nesting, flows, lanes), and holding what torch writes for a
# collective: distributedInfo, record_param_comms with its args, the nccl:* range, an NCCL kernel carrying the args.
# MODE sp: an all-gather and a reduce-scatter (torch's all_gather_into_tensor and reduce_scatter_tensor); fused: the
# same, the reduce-scatter's kernel ours (peer_slots.h);
# overlap_window: an all-reduce by NCCL's symmetric kernel; else an all-reduce by its ring.
include(${LADDER_CMAKE_DIR}/no_gpu.cmake)
file(REMOVE_RECURSE "${DIR}")
execute_process(COMMAND ${CMD} --trace-dir ${DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 300)
ladder_stop_if_no_gpu("${out}${err}" "the command")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit status ${rc}; output:\n${out}${err}")
endif()
file(GLOB traces "${DIR}/*/rank*.pt.trace.json")
file(GLOB texts "${DIR}/*/rank*.txt")
list(LENGTH traces n)
list(LENGTH texts nt)
if(NOT n EQUAL RANKS OR NOT nt EQUAL RANKS)
  message(FATAL_ERROR "expected ${RANKS} traces and ${RANKS} .txt files in one folder under ${DIR}, found ${n} and "
                      "${nt}: ${traces} ${texts}")
endif()
set(stamps "")
foreach(t IN LISTS traces)
  get_filename_component(name "${t}" NAME)
  string(REGEX REPLACE "^rank[0-9]+\\.([0-9]+)\\.pt\\.trace\\.json$" "\\1" stamp "${name}")
  list(APPEND stamps "${stamp}")
  execute_process(COMMAND ${CHECKER} ${t} RESULT_VARIABLE crc OUTPUT_VARIABLE cout ERROR_VARIABLE cerr)
  if(NOT crc EQUAL 0)
    message(FATAL_ERROR "${t} fails the trace checker:\n${cout}${cerr}")
  endif()
  file(READ "${t}" text)
  set(needles "\"distributedInfo\": {\"backend\": \"nccl\"" "\"world_size\": ${RANKS}" "\"record_param_comms\"")
  set(kinds "")  # per collective: torch's name for it, its range, the start of its kernel's name
  if(MODE STREQUAL "sp")
    list(APPEND kinds "_allgather_base|nccl:_all_gather_base|ncclDevKernel_AllGather"
         "reduce_scatter_tensor|nccl:_reduce_scatter_base|ncclDevKernel_ReduceScatter_Sum_bf16")
  elseif(MODE STREQUAL "fused")  # the reduce-scatter by our kernel (peer_slots.h); on one rank NCCL copies x, no kernel
    if(RANKS GREATER 1)
      list(APPEND kinds "_allgather_base|nccl:_all_gather_base|ncclDevKernel_AllGather")
    endif()
    list(APPEND kinds "reduce_scatter_tensor|nccl:_reduce_scatter_base|ncclLadderReduceSlotsKernel")
  elseif(MODE STREQUAL "overlap_window")  # buffers in NCCL windows: NCCL's symmetric kernel
    list(APPEND kinds "allreduce|nccl:all_reduce|ncclSymkDevKernel_AllReduce_")
  else()
    list(APPEND kinds "allreduce|nccl:all_reduce|ncclDevKernel_AllReduce_Sum_bf16")
  endif()
  foreach(k IN LISTS kinds)
    string(REPLACE "|" ";" parts "${k}")
    list(GET parts 0 name)
    list(GET parts 1 range)
    list(GET parts 2 kernel)
    list(APPEND needles "\"Collective name\": \"${name}\"" "\"${range}\"" "\"${kernel}"
         "\"cat\": \"gpu_user_annotation\", \"name\": \"${range}\"")
    # The NCCL kernel's args carry the collective's, as Kineto copies them.
    if(NOT text MATCHES "\"name\": \"${kernel}[^\n]*\"Collective name\": \"${name}\"")
      message(FATAL_ERROR "${t}: the NCCL kernel ${kernel}... carries no \"Collective name\": \"${name}\"")
    endif()
  endforeach()
  foreach(needle IN LISTS needles)
    string(FIND "${text}" "${needle}" at)
    if(at LESS 0)
      message(FATAL_ERROR "${t} has no ${needle}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES stamps)
list(LENGTH stamps ns)
if(NOT ns EQUAL 1)
  message(FATAL_ERROR "the ranks' files carry different stamps: ${stamps}")
endif()
message(STATUS "ok: ${n} rank traces in one folder, stamp ${stamps}")
