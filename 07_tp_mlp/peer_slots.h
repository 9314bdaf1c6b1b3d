// --mode fused: the down GEMM writes its reduce-scatter straight into its peers' memory, through NCCL's device API
// (NCCL 2.28, nccl_device.h), and no NCCL collective kernel runs for it.
//
// sp's reduce-scatter (tp_mlp.h) takes y_all, this rank's partial sum for every row, and NCCL's kernel moves each
// rank's rows to their owner and adds them up there. Here the rows never sit in y_all. Every rank holds an inbox in an
// NCCL window: one slot of [R, dim] per rank. The down GEMM runs once per owner, on that owner's R rows of m_all, and
// its output pointer is the owner's slot for this rank: a pointer into the owner's GPU memory over NVLink (an "LSA"
// pointer, load-store accessible, which NCCL maps into every rank of the window). So the GEMM's own stores are the
// transfer. Then one small kernel on each rank waits at a barrier until every peer has written (an LSA barrier: flags
// in the window that each rank's blocks set and poll), adds its slots in rank order, and passes a second barrier,
// after which every rank has read its inbox and the next forward may write again.
//
// Why a second kernel instead of adding in the GEMM's epilogue: the owner must wait for the last peer's part anyway,
// and a separate reduction keeps the GEMM unchanged (cuBLASLt, any GPU) and the sum in a fixed order (rank 0's part
// first), so the result does not depend on which rank came first. It is also what lets the trace read as PyTorch's:
// the reduction kernel sits inside record_param_comms { nccl:_reduce_scatter_base }, like sp's NCCL kernel.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "07_tp_mlp/nccl_comm.h"
#include "gpu/tensor.h"

namespace ch07 {

// Empty when --mode fused can run with this communicator, else one line saying why not: this NCCL has no device API
// (before 2.28), or some rank's GPU cannot load and store another's memory (the ranks are not one NVLink/P2P domain).
std::string peer_slots_cannot_run(const Communicator& comm);

// The reduction alone, on one GPU: out [n] = the sum of the `slots` consecutive [n] parts of inbox, in order, in
// float32, rounded once to bf16 (n a multiple of 8). PeerSlots::reduce runs the same arithmetic between its barriers.
void sum_slots(const ladder::Tensor& inbox, int slots, const ladder::Tensor& out, cudaStream_t stream);

class PeerSlots {
 public:
  // Collective: every rank calls it with the same rows (R, the rows each rank owns) and dim. Allocates the inbox
  // (ranks x [R, dim] bf16) in an NCCL window and a device communicator with one LSA barrier per reduction block. On
  // one rank there is no peer (and NCCL makes no device communicator for one): the inbox is plain memory.
  PeerSlots(Communicator& comm, int64_t rows, int64_t dim);
  ~PeerSlots();
  PeerSlots(const PeerSlots&) = delete;
  PeerSlots& operator=(const PeerSlots&) = delete;

  // Where this rank writes its part of `owner`'s rows: slot `rank` of owner's inbox, [R, dim], in owner's memory.
  const ladder::Tensor& to(int owner) const { return to_.at(static_cast<size_t>(owner)); }

  // On the communication stream: out [R, dim] = the sum of this rank's slots, once every rank has written them
  // (rank order, float32 sums rounded once to bf16), inside record_param_comms { nccl:_reduce_scatter_base }.
  void reduce(const ladder::Tensor& out) const;

 private:
  struct Device;  // NCCL's device communicator (nccl_device.h lives in the .cu file only)
  Communicator& comm_;
  int64_t rows_, dim_;
  ladder::Tensor inbox_;            // this rank's slots, [ranks * R, dim]
  std::vector<ladder::Tensor> to_;  // for each owner, this rank's slot in its inbox
  std::unique_ptr<Device> device_;
};

}  // namespace ch07
