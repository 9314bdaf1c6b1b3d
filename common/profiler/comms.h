// What torch.distributed writes into a rank's trace, so a trace of ours from a run over several GPUs reads like one
// torch.profiler wrote (HTA, `ladder-trace ranks`, Perfetto): the top-level "distributedInfo", the args of the
// `record_param_comms` op around each collective (which the builder copies onto the NCCL kernel, as Kineto does), and
// the file name tensorboard_trace_handler gives each rank. Pure functions of plain values: no MPI, no NCCL.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ladder {

// A process group as torch names it: the default group of a run is "0", "default_pg", every rank.
struct ProcessGroup {
  std::string name = "0";
  std::string desc = "default_pg";
  std::vector<int> ranks;  // global ranks, in group order
};

// One collective call as record_param_comms describes it.
struct CollectiveCall {
  std::string name;        // torch's "Collective name": "allreduce", "_allgather_base", "reduce_scatter_tensor"
  int64_t in_nelems = 0;   // elements this rank sends in
  int64_t out_nelems = 0;  // elements this rank gets out
  std::string dtype;       // torch's ScalarType name: "BFloat16", "Float"
  int rank = 0;            // this rank's global rank
};

// The args of record_param_comms in torch's keys and order, values as JSON text: "Collective name", "In msg nelems",
// "Out msg nelems", "Group size", "dtype", "In split size", "Out split size", "Global rank start",
// "Global rank stride", "Process Group Name", "Process Group Description", "Process Group Ranks" (a string, "[0, 1]",
// as torch writes it) and "Rank". The global rank start and stride describe `group.ranks` when it is an arithmetic
// progression, else they are -1 as in torch.
std::vector<std::pair<std::string, std::string>> record_param_comms_args(const CollectiveCall& call,
                                                                         const ProcessGroup& group);

// The top-level "distributedInfo" value, as JSON text: {"backend": "nccl", "rank": 0, "world_size": 2,
// "pg_count": 1, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl",
// "pg_size": 2, "ranks": [0, 1]}], "nccl_version": "2.28.3"}.
std::string distributed_info_json(int rank, int world_size, const ProcessGroup& group, const std::string& nccl_version);

// The file name tensorboard_trace_handler writes for one rank when the worker is named after it, as torchtune names
// its workers: "rank0.1764171234567890123.pt.trace.json". `stamp_ns` is the same for every rank of one run.
std::string rank_trace_file(int rank, int64_t stamp_ns);

}  // namespace ladder
