// See work.h. gelu_mul(g, u) = gelu(g) * u is elementwise: g and u read once, the product written once, and its
// arithmetic hides under the memory time, so it counts bytes and no FLOPs, like aten::gelu and aten::mul.
#include "03_fused_mlp/work.h"

#include "trace/work.h"

namespace ch03 {

void register_gelu_mul_work() { ladder::register_op_work("ladder::gelu_mul", ladder::elementwise_work); }

}  // namespace ch03
