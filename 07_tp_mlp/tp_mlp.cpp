#include "07_tp_mlp/tp_mlp.h"

#include <fmt/format.h>

#include <algorithm>

#include "04_epilogue_mlp/kernels.cuh"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/stream.h"

namespace ch07 {

using ladder::DType;
using ladder::Tensor;

namespace {

// Rows [first, first + count) of a row-major [M, cols] tensor: a view, no copy.
Tensor rows_of(const Tensor& t, int64_t first, int64_t count, int64_t cols) {
  return ladder::view_of(static_cast<char*>(t.data) + first * cols * ladder::dtype_size(t.dtype), t.dtype,
                         {count, cols});
}

}  // namespace

Shard shard_weights(const Tensor& gate, const Tensor& up, const Tensor& down, int rank, int ranks) {
  const int64_t hidden = gate.size(0), dim = gate.size(1), hs = hidden / ranks;
  const size_t e = ladder::dtype_size(gate.dtype);
  Shard s{ladder::empty({hs, dim}, gate.dtype), ladder::empty({hs, dim}, gate.dtype),
          ladder::empty({dim, hs}, gate.dtype)};
  // Rows of gate and up: one contiguous block each. Columns of down: dim rows of hs values, each H values apart.
  const size_t offset = static_cast<size_t>(rank * hs * dim) * e;
  CUDA_CHECK(
      cudaMemcpy(s.gate.data, static_cast<char*>(gate.data) + offset, s.gate.nbytes(), cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaMemcpy(s.up.data, static_cast<char*>(up.data) + offset, s.up.nbytes(), cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaMemcpy2D(s.down.data, hs * e, static_cast<char*>(down.data) + rank * hs * e, hidden * e, hs * e, dim,
                          cudaMemcpyDeviceToDevice));
  return s;
}

std::string tp_shape_rule(int64_t dim, int64_t hidden, int ranks) {
  if (hidden % ranks != 0)
    return fmt::format(
        "hidden = {} does not split over {} ranks: each rank takes hidden/ranks units of W_gate and "
        "W_up, so hidden must be a multiple of the rank count (-np)",
        hidden, ranks);
  if (const std::string rule = ch04::geglu_gemm_shape_rule(dim, hidden / ranks); !rule.empty())
    return fmt::format("each of the {} ranks holds hidden/ranks = {} units: {}", ranks, hidden / ranks, rule);
  return "";
}

TensorParallelMlp::TensorParallelMlp(const Shard& shard, const Communicator& comm, std::string variant, int max_chunks,
                                     int overlap_sms)
    : w_(shard), comm_(comm), variant_(std::move(variant)), overlap_sms_(overlap_sms) {
  events_.resize(static_cast<size_t>(max_chunks) + 1);
  for (cudaEvent_t& e : events_) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
}

TensorParallelMlp::~TensorParallelMlp() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

void TensorParallelMlp::hand_over(int i, cudaStream_t from, cudaStream_t to) const {
  CUDA_CHECK(cudaEventRecord(events_.at(static_cast<size_t>(i)), from));
  CUDA_CHECK(cudaStreamWaitEvent(to, events_.at(static_cast<size_t>(i)), 0));
}

void TensorParallelMlp::tp(const Tensor& x, const Tensor& m, const Tensor& y) const {
  const cudaStream_t compute = ladder::current_stream();
  ch04::geglu_gemm(x, w_.gate, w_.up, m, variant_);  // m = gelu(x @ gate_r^T) * (x @ up_r^T): this rank's units
  ladder::ops::linear(m, w_.down, nullptr, y);       // y = m @ down_r^T: this rank's part of the sum over hidden
  hand_over(0, compute, comm_.stream());
  comm_.all_reduce_sum(y);  // y = the sum of every rank's part
  hand_over(1, comm_.stream(), compute);
}

void TensorParallelMlp::sp(const Tensor& x_rows, const Tensor& x_all, const Tensor& m_all, const Tensor& y_all,
                           const Tensor& y_rows) const {
  const cudaStream_t compute = ladder::current_stream();
  hand_over(0, compute, comm_.stream());  // x_rows written, and the last forward's GEMMs done with x_all
  comm_.all_gather(x_rows, x_all);
  hand_over(1, comm_.stream(), compute);
  ch04::geglu_gemm(x_all, w_.gate, w_.up, m_all, variant_);
  ladder::ops::linear(m_all, w_.down, nullptr, y_all);
  hand_over(2, compute, comm_.stream());
  comm_.reduce_scatter_sum(y_all, y_rows);
  hand_over(3, comm_.stream(), compute);
}

void TensorParallelMlp::fused(const Tensor& x_rows, const Tensor& x_all, const Tensor& m_all, const PeerSlots& slots,
                              const Tensor& y_rows) const {
  const cudaStream_t compute = ladder::current_stream();
  const int64_t rows = y_rows.size(0), hs = m_all.size(1);
  hand_over(0, compute, comm_.stream());
  comm_.all_gather(x_rows, x_all);
  hand_over(1, comm_.stream(), compute);
  ch04::geglu_gemm(x_all, w_.gate, w_.up, m_all, variant_);
  // Owner by owner, starting with the next rank, so that at any moment the ranks write into different peers and
  // no GPU's links take every rank's stores at once; this rank's own rows last.
  for (int k = 1; k <= comm_.size(); ++k) {
    const int owner = (comm_.rank() + k) % comm_.size();
    ladder::ops::linear(rows_of(m_all, owner * rows, rows, hs), w_.down, nullptr, slots.to(owner));
  }
  hand_over(2, compute, comm_.stream());
  slots.reduce(y_rows);
  hand_over(3, comm_.stream(), compute);
}

void TensorParallelMlp::overlap(const Tensor& x, const Tensor& m, const Tensor& y, int chunks) const {
  if (chunks < 1 || static_cast<size_t>(chunks) >= events_.size())
    throw ladder::Error(fmt::format("overlap: {} chunks, expected 1 to {}", chunks, events_.size() - 1));
  const cudaStream_t compute = ladder::current_stream();
  const int64_t dim = x.size(-1), hs = w_.gate.size(0), rows = x.numel() / dim;
  const int64_t per_chunk = (rows + chunks - 1) / chunks;
  const int n = static_cast<int>((rows + per_chunk - 1) / per_chunk);  // chunks of per_chunk rows, the last shorter
  auto chunk_rows = [&](int i, const Tensor& t, int64_t cols) {
    const int64_t first = i * per_chunk;
    return rows_of(t, first, std::min(per_chunk, rows - first), cols);
  };
  // The CPU issues chunk i+1's GEMMs before chunk i's all-reduce: ncclAllReduce costs the host several microseconds,
  // and issued first it would leave the compute stream idle until the CPU got to the next GEMM. So the compute stream
  // always has the next chunk queued, and the all-reduce of chunk i, queued on the communication stream behind the
  // event after chunk i's down GEMM, runs beside chunk i+1's GEMMs.
  // Event i marks the end of chunk i's down GEMM; the communication stream waits for it just before chunk i's
  // all-reduce (waiting any earlier would hold chunk i-1's all-reduce back behind chunk i's GEMMs too).
  for (int i = 0; i <= n; ++i) {
    if (i < n) {
      // From chunk 1 on, an all-reduce runs beside the GEMMs: they leave it the SMs they are told to leave.
      const ladder::GemmSmLimit limit(i > 0 ? overlap_sms_ : 0);
      ch04::geglu_gemm(chunk_rows(i, x, dim), w_.gate, w_.up, chunk_rows(i, m, hs), variant_);
      ladder::ops::linear(chunk_rows(i, m, hs), w_.down, nullptr, chunk_rows(i, y, dim));
      CUDA_CHECK(cudaEventRecord(events_.at(static_cast<size_t>(i)), compute));
    }
    if (i > 0) {
      CUDA_CHECK(cudaStreamWaitEvent(comm_.stream(), events_.at(static_cast<size_t>(i - 1)), 0));
      comm_.all_reduce_sum(chunk_rows(i - 1, y, dim));
    }
  }
  hand_over(n, comm_.stream(), compute);  // the forward ends when the last all-reduce has
}

}  // namespace ch07
