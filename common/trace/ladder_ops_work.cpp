// See ladder_ops_work.h. The formulas follow the ops' definitions in the chapters' kernels.
#include "trace/ladder_ops_work.h"

#include "trace/work.h"

namespace ladder {

namespace {

// 04's geglu_gemm(x, W_gate, W_up) = gelu(x @ W_gate^T) * (x @ W_up^T): two GEMMs' FLOPs, x and both weights read
// once, m [rows, hidden] written once.
bool geglu_gemm(const Event& op, Work* w) {
  const auto& dims = op.input_dims;
  if (dims.size() != 3 || dims[0].empty() || dims[1].size() != 2 || dims[2] != dims[1]) return false;
  if (op.input_types.size() < 3) return false;
  const int64_t k = dims[0].back(), hidden = dims[1][0];
  if (k != dims[1][1] || k <= 0) return false;
  const double x_bytes = static_cast<double>(dtype_bytes(op.input_types[0]));
  const double rows = numel(dims[0]) / static_cast<double>(k);
  double read = 0;
  for (int i = 0; i < 3; ++i) read += numel(dims[i]) * static_cast<double>(dtype_bytes(op.input_types[i]));
  if (!gemm_work(rows, 2 * static_cast<double>(hidden), static_cast<double>(k), read, x_bytes, w)) return false;
  w->bytes -= rows * static_cast<double>(hidden) * x_bytes;  // m is half as wide as the two GEMMs' outputs
  return true;
}

}  // namespace

void register_ladder_ops_work() {
  // 03's gelu_mul(g, u) = gelu(g) * u: elementwise, g and u read once, the product written once.
  register_op_work("ladder::gelu_mul", elementwise_work);
  register_op_work("ladder::geglu_gemm", geglu_gemm);
}

}  // namespace ladder
