// See ladder_ops.h. One formula per op, each beside the chapter that teaches the op:
//  - ladder::gelu_mul (03_fused_mlp): gelu(g) * u is elementwise: g and u read once, the product written once, and its
//    arithmetic hides under the memory time, so it counts bytes and no FLOPs, like aten::gelu and aten::mul;
//  - ladder::geglu_gemm (04_epilogue_mlp): gelu(x @ W_gate^T) * (x @ W_up^T): the FLOPs of two GEMMs of x by
//    [hidden, dim] weights, x and both weights read once, and m [rows, hidden] written once (g and u never leave the
//    chip: that is the point of the rung);
//  - ladder::gelu_mul_backward (06_train_mlp): elementwise like gelu_mul, no FLOPs counted.
#include "work/ladder_ops.h"

#include <cstdint>

#include "trace/analyses/work.h"

namespace ladder {

namespace {

bool geglu_gemm(const Event& op, Work* w) {
  const auto& dims = op.input_dims();
  const auto& types = op.input_types();
  // Three tensors; torch.ops.ladder.geglu_gemm (chapter 05) records its `variant` string as a fourth input with no dims.
  if (dims.size() == 4 && !dims[3].empty()) return false;
  if (dims.size() < 3 || dims.size() > 4 || dims[0].empty() || dims[1].size() != 2 || dims[2] != dims[1]) return false;
  if (types.size() < 3) return false;
  const int64_t k = dims[0].back(), hidden = dims[1][0];
  if (k != dims[1][1] || k <= 0) return false;
  const double x_bytes = static_cast<double>(dtype_bytes(types[0]));
  const double rows = numel(dims[0]) / static_cast<double>(k);
  double read = 0;
  for (int i = 0; i < 3; ++i) read += numel(dims[i]) * static_cast<double>(dtype_bytes(types[i]));
  if (!gemm_work(rows, 2 * static_cast<double>(hidden), static_cast<double>(k), read, x_bytes, w)) return false;
  w->bytes -= rows * static_cast<double>(hidden) * x_bytes;  // m is half as wide as the two GEMMs' outputs
  return true;
}

// gelu_mul_backward(dh, g, u) -> (dg, du): three inputs of one shape read, two outputs of that shape written.
bool gelu_mul_backward(const Event& op, Work* w) {
  const auto& dims = op.input_dims();
  const auto& types = op.input_types();
  if (dims.size() != 3 || types.size() < 3 || dims[1] != dims[0] || dims[2] != dims[0]) return false;
  const double n = numel(dims[0]);
  const double elem = static_cast<double>(dtype_bytes(types[0]));
  if (n < 0 || elem <= 0) return false;
  for (int i = 1; i < 3; ++i)
    if (dtype_bytes(types[i]) != dtype_bytes(types[0])) return false;
  w->flops = 0;
  w->bytes = 5 * n * elem;
  return true;
}

}  // namespace

void register_ladder_ops_work() {
  register_op_work("ladder::gelu_mul", elementwise_work);
  register_op_work("ladder::geglu_gemm", geglu_gemm);
  register_op_work("ladder::gelu_mul_backward", gelu_mul_backward);
}

}  // namespace ladder
