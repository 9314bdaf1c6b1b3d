// Chapter 06 (eager): the two elementwise ops of eager autograd's backward that the forward chapters have no kernel
// for. aten::gelu_backward is what GeluBackward0 runs; aten::add_ is the autograd engine summing the two gradients that
// reach x (one through gate, one through up) before x's AccumulateGrad.
// Only the eager mode runs them, and only so that its trace matches PyTorch's eager backward op for op (the same ops
// under the same nodes, moving the same bytes, for `ladder-trace diff` against torch's trace). The other modes do
// without them: they make dg and du in one kernel and x's gradient in one GEMM of the stacked weight.
// Both are memory-bound: each element is read and written once, 16 bytes at a time where the pointers allow (as
// 03_simple_mlp's kernels, whose layout these follow: one 16-byte vector per thread, the n % 8 tail by block 0, a
// plain kernel for misaligned pointers).
#include <cstdint>

#include "06_train_mlp/gelu_backward.cuh"
#include "06_train_mlp/kernels.cuh"
#include "cuda/check.h"
#include "gpu/elementwise.cuh"
#include "gpu/ops.h"
#include "gpu/stream.h"

namespace ch06 {
namespace {

using bf16 = __nv_bfloat16;
using ladder::kBlock;
using ladder::kVecElems;

// One element of each op: float32 arithmetic, rounded to bf16 once, like PyTorch's bf16 kernels.
struct GeluBackwardOp {
  __device__ bf16 operator()(bf16 grad, bf16 g) const {
    return __float2bfloat16(gelu_tanh_backward_f32(__bfloat162float(grad), __bfloat162float(g)));
  }
};
struct AddOp {
  __device__ bf16 operator()(bf16 a, bf16 b) const {
    return __float2bfloat16(__fadd_rn(__bfloat162float(a), __bfloat162float(b)));
  }
};

template <class Op>
__global__ void __launch_bounds__(kBlock) binary_plain_kernel(const bf16* a, const bf16* b, bf16* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i < n) out[i] = Op{}(a[i], b[i]);
}

template <class Op>
__global__ void __launch_bounds__(kBlock) binary_vec_kernel(const bf16* a, const bf16* b, bf16* out, int64_t n) {
  const int64_t n_vec = n / kVecElems;
  const int64_t v = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (v < n_vec) {
    const uint4 va = reinterpret_cast<const uint4*>(a)[v], vb = reinterpret_cast<const uint4*>(b)[v];
    const bf16* ea = reinterpret_cast<const bf16*>(&va);
    const bf16* eb = reinterpret_cast<const bf16*>(&vb);
    uint4 vo;
    bf16* eo = reinterpret_cast<bf16*>(&vo);
#pragma unroll
    for (int k = 0; k < kVecElems; ++k) eo[k] = Op{}(ea[k], eb[k]);
    reinterpret_cast<uint4*>(out)[v] = vo;
  }
  const int64_t i = n_vec * kVecElems + threadIdx.x;  // the tail
  if (blockIdx.x == 0 && i < n) out[i] = Op{}(a[i], b[i]);
}

template <class Op>
void launch_binary(const bf16* a, const bf16* b, bf16* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (ladder::aligned16(a) && ladder::aligned16(b) && ladder::aligned16(out)) {
    binary_vec_kernel<Op><<<ladder::vec_grid(n, 1, 0), kBlock, 0, stream>>>(a, b, out, n);
  } else {
    binary_plain_kernel<Op><<<ladder::blocks_for(n), kBlock, 0, stream>>>(a, b, out, n);
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void gelu_backward(const ladder::Tensor& grad, const ladder::Tensor& g, const ladder::Tensor& grad_in) {
  ladder::OpRange range("aten::gelu_backward", {&grad, &g});
  ladder::require_flat(ladder::DType::BF16, "gelu_backward", "gradient", grad, grad.numel());
  ladder::require_flat(ladder::DType::BF16, "gelu_backward", "input", g, grad.numel());
  ladder::require_flat(ladder::DType::BF16, "gelu_backward", "output", grad_in, grad.numel());
  ladder::require_no_partial_overlap("gelu_backward", "the gradient", grad_in, grad);
  ladder::require_no_partial_overlap("gelu_backward", "the input", grad_in, g);
  launch_binary<GeluBackwardOp>(grad.ptr<bf16>(), g.ptr<bf16>(), grad_in.ptr<bf16>(), grad.numel(),
                                ladder::current_stream());
}

void add_(const ladder::Tensor& a, const ladder::Tensor& b) {
  ladder::OpRange range("aten::add_", {&a, &b});
  ladder::require_flat(ladder::DType::BF16, "add_", "first input", a, a.numel());
  ladder::require_flat(ladder::DType::BF16, "add_", "second input", b, a.numel());
  ladder::require_no_partial_overlap("add_", "the second input", a, b);
  launch_binary<AddOp>(a.ptr<bf16>(), b.ptr<bf16>(), a.ptr<bf16>(), a.numel(), ladder::current_stream());
}

}  // namespace ch06
