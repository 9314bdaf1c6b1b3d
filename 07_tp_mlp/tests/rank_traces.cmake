# Runs CMD (an mpirun line writing its traces under DIR), then checks the run's folder the way a reader of PyTorch's
# traces would find it: one rank<r>.<ns>.pt.trace.json and one rank<r>.txt per rank (RANKS), one stamp shared by all,
# each trace passing the strict checker (CHECKER: nesting, flows, lanes), and holding what torch writes for a
# collective: distributedInfo, record_param_comms with its args, nccl:all_reduce, an NCCL kernel carrying the args.
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
  foreach(needle "\"distributedInfo\": {\"backend\": \"nccl\"" "\"world_size\": ${RANKS}" "\"record_param_comms\""
                 "\"Collective name\": \"allreduce\"" "\"nccl:all_reduce\"" "\"ncclDevKernel_AllReduce_Sum_bf16"
                 "\"cat\": \"gpu_user_annotation\", \"name\": \"nccl:all_reduce\"")
    string(FIND "${text}" "${needle}" at)
    if(at LESS 0)
      message(FATAL_ERROR "${t} has no ${needle}")
    endif()
  endforeach()
  # The NCCL kernel's args carry the collective's, as Kineto copies them.
  if(NOT text MATCHES "\"name\": \"ncclDevKernel_AllReduce[^\n]*\"Collective name\": \"allreduce\"")
    message(FATAL_ERROR "${t}: the NCCL kernel carries no \"Collective name\"")
  endif()
endforeach()
list(REMOVE_DUPLICATES stamps)
list(LENGTH stamps ns)
if(NOT ns EQUAL 1)
  message(FATAL_ERROR "the ranks' files carry different stamps: ${stamps}")
endif()
message(STATUS "ok: ${n} rank traces in one folder, stamp ${stamps}")
