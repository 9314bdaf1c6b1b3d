// See work.h. All three ops are elementwise: no FLOPs counted (their arithmetic hides under the memory time), bytes
// read once and written once.
#include "06_train_mlp/work.h"

#include "trace/work.h"

namespace ch06 {
namespace {

// gelu_mul_backward(dh, g, u) -> (dg, du): three inputs of one shape read, two outputs of that shape written.
bool gelu_mul_backward(const ladder::Event& op, ladder::Work* w) {
  const auto& dims = op.input_dims();
  const auto& types = op.input_types();
  if (dims.size() != 3 || types.size() < 3 || dims[1] != dims[0] || dims[2] != dims[0]) return false;
  const double n = ladder::numel(dims[0]);
  const double elem = static_cast<double>(ladder::dtype_bytes(types[0]));
  if (n < 0 || elem <= 0) return false;
  for (int i = 1; i < 3; ++i)
    if (ladder::dtype_bytes(types[i]) != ladder::dtype_bytes(types[0])) return false;
  w->flops = 0;
  w->bytes = 5 * n * elem;
  return true;
}

}  // namespace

void register_backward_work() {
  ladder::register_op_work("ladder::gelu_mul_backward", gelu_mul_backward);
  ladder::register_op_work("aten::gelu_backward", ladder::elementwise_work);
  ladder::register_op_work("aten::add_", ladder::elementwise_work);
}

}  // namespace ch06
