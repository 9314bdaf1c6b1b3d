// The MLP of 04_epilogue_mlp split over the ranks, as Megatron and PyTorch's TP tutorial split it: gate and up
// column-parallel (rank r computes hidden units [r*H/N, (r+1)*H/N) from the whole x), down row-parallel (rank r
// multiplies its slice of m by the same columns of W_down, a partial y over its K slice), and one all-reduce (sum) of
// y, after which every rank holds the whole y. No rank ever needs another's slice of m: that is why gate/up go by
// columns and down by rows.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "07_tp_mlp/nccl_comm.h"
#include "07_tp_mlp/peer_slots.h"
#include "gpu/tensor.h"

namespace ch07 {

// Rank `rank` of `ranks`'s shard of the full weights (as nn.Linear stores them): rows [r*Hs, (r+1)*Hs) of w_gate and
// w_up ([Hs, dim] each) and the same columns of w_down ([dim, Hs]), copied into memory of its own, Hs = hidden/ranks.
struct Shard {
  ladder::Tensor gate, up, down;
};
Shard shard_weights(const ladder::Tensor& gate, const ladder::Tensor& up, const ladder::Tensor& down, int rank,
                    int ranks);

// Empty when `ranks` ranks can split these shapes, else one line naming the rule: hidden divisible by ranks, and each
// shard's hidden (hidden/ranks) a multiple of 8, the rule of 04's kernel (geglu_gemm_shape_rule).
std::string tp_shape_rule(int64_t dim, int64_t hidden, int ranks);

class TensorParallelMlp {
 public:
  // The compute stream is ladder::current_stream() (where 04's kernel and the cuBLASLt ops launch); collectives run
  // on comm's own stream. `variant`: 04's geglu_gemm variant. `overlap_sms`: the SMs overlap's GEMMs after the first
  // chunk may use (0: all), the rest left free for the all-reduce beside them.
  TensorParallelMlp(const Shard& shard, const Communicator& comm, std::string variant, int max_chunks,
                    int overlap_sms = 0);
  ~TensorParallelMlp();
  TensorParallelMlp(const TensorParallelMlp&) = delete;
  TensorParallelMlp& operator=(const TensorParallelMlp&) = delete;

  // x [M, dim] (any leading shape), m [M, Hs] scratch, y [M, dim] out. Both return with the compute stream ordered
  // after the all-reduce: work queued after them sees the whole y.
  // --mode tp: the fused gate/up GEMM, the down GEMM, then one all-reduce of y on the communication stream.
  void tp(const ladder::Tensor& x, const ladder::Tensor& m, const ladder::Tensor& y) const;
  // --mode overlap: the rows in `chunks` chunks; chunk i's all-reduce runs on the communication stream while chunk
  // i+1's GEMMs run on the compute stream. An event after chunk i's down GEMM orders its all-reduce after it, and the
  // CPU issues chunk i+1's GEMMs before chunk i's all-reduce, so the compute stream never waits for the CPU.
  void overlap(const ladder::Tensor& x, const ladder::Tensor& m, const ladder::Tensor& y, int chunks) const;
  // --mode sp (sequence parallel, as Megatron pairs it with tensor parallelism): x and y split by rows, rank r holding
  // rows [r*R, (r+1)*R) of each (x_rows, y_rows: [R, dim]; the rows padded with zeros to N*R). One all-gather puts
  // every rank's rows of x into x_all [N*R, dim], the two GEMMs run on all of them (m_all [N*R, Hs], y_all [N*R, dim]:
  // this rank's part of the sum for every row), and one reduce-scatter leaves each rank its rows of the sum. The
  // bytes on the links are those of the all-reduce, in two halves with the GEMMs between them.
  void sp(const ladder::Tensor& x_rows, const ladder::Tensor& x_all, const ladder::Tensor& m_all,
          const ladder::Tensor& y_all, const ladder::Tensor& y_rows) const;
  // --mode fused: sp without y_all and without NCCL's reduce-scatter kernel (peer_slots.h). After the all-gather and
  // the gate/up GEMM, the down GEMM runs once per owner rank o, on o's R rows of m_all, and writes straight into
  // slots.to(o), this rank's slot in o's memory; then slots.reduce sums this rank's slots into y_rows.
  void fused(const ladder::Tensor& x_rows, const ladder::Tensor& x_all, const ladder::Tensor& m_all,
             const PeerSlots& slots, const ladder::Tensor& y_rows) const;

 private:
  void hand_over(int i, cudaStream_t from, cudaStream_t to) const;  // `to` waits for what `from` has queued so far
  const Shard& w_;
  const Communicator& comm_;
  std::string variant_;
  int overlap_sms_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace ch07
