// The derivative of the tanh-approximated GELU, in float32, as PyTorch's eager aten::gelu_backward computes it
// (GeluBackwardCUDAKernelImpl, approximate="tanh", in ATen's ActivationGeluKernel.cu), for a bf16 tensor:
//     inner = kBeta * (x + kKappa * x^3)                t = tanh(inner)
//     left  = 0.5 * x                                   right = 1 + t
//     dgelu = 0.5 * right + left * (1 - t^2) * kBeta * (1 + 3 * kKappa * x^2)
//     dx    = dy * dgelu, rounded to bf16
// Every kernel of this chapter that produces dg (eager's gelu_backward, the fused gelu_mul backward, the backward
// GEMM's epilogue) inlines this one function, and every rounding is pinned with an intrinsic, so the two give
// bit-identical dg (as common/gpu/gelu.cuh does for the forward). tanhf is the accurate library routine: these kernels
// are memory-bound, the arithmetic hides under the loads.
#pragma once

#include <cuda_bf16.h>

#include "gpu/gelu.cuh"  // gelu_tanh_f32, kGeluBeta, kGeluKappa

namespace ch06 {

__device__ __forceinline__ float gelu_tanh_backward_f32(float dy, float x) {
  const float x_sq = __fmul_rn(x, x);
  const float x_cube = __fmul_rn(x_sq, x);
  const float inner = __fmul_rn(ladder::kGeluBeta, __fmaf_rn(ladder::kGeluKappa, x_cube, x));
  const float t = tanhf(inner);
  const float left = __fmul_rn(0.5f, x);
  const float right = __fadd_rn(1.0f, t);
  const float left_derivative = __fmul_rn(0.5f, right);
  const float tanh_derivative = __fsub_rn(1.0f, __fmul_rn(t, t));
  const float inner_derivative = __fmul_rn(ladder::kGeluBeta, __fmaf_rn(3.0f * ladder::kGeluKappa, x_sq, 1.0f));
  const float right_derivative = __fmul_rn(__fmul_rn(left, tanh_derivative), inner_derivative);
  return __fmul_rn(dy, __fadd_rn(left_derivative, right_derivative));
}

// One element of the backward of h = gelu(g) * u, given dh and a = gelu(g) as the forward stored it (rounded to bf16):
// what MulBackward0 then GeluBackward0 compute, with the same roundings (dh * u rounded to bf16, as eager stores it).
__device__ __forceinline__ void gelu_mul_backward_given_a(float dh, float g, float a, float u, __nv_bfloat16* dg,
                                                          __nv_bfloat16* du) {
  *du = __float2bfloat16(__fmul_rn(dh, a));
  const float dh_u = __bfloat162float(__float2bfloat16(__fmul_rn(dh, u)));  // stored by eager
  *dg = __float2bfloat16(gelu_tanh_backward_f32(dh_u, g));
}

// The same from bf16 inputs, gelu(g) recomputed and rounded as the forward stored it. Every kernel that makes dg and du
// calls this, or (dgated_gemm.cu's epilogue) the function above with the same a.
__device__ __forceinline__ void gelu_mul_backward_one(__nv_bfloat16 dh, __nv_bfloat16 g, __nv_bfloat16 u,
                                                      __nv_bfloat16* dg, __nv_bfloat16* du) {
  const float fg = __bfloat162float(g);
  const float a = __bfloat162float(__float2bfloat16(ladder::gelu_tanh_f32(fg)));
  gelu_mul_backward_given_a(__bfloat162float(dh), fg, a, __bfloat162float(u), dg, du);
}

}  // namespace ch06
