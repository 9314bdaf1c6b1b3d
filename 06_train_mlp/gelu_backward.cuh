// The derivative of the tanh-approximated GELU, in float32. PyTorch's eager aten::gelu_backward
// (GeluBackwardCUDAKernelImpl, approximate="tanh", in ATen's ActivationGeluKernel.cu) computes, for a bf16 tensor:
//     inner = kBeta * (x + kKappa * x^3)                t = tanh(inner)
//     dgelu = 0.5 * (1 + t) + 0.5 * x * (1 - t^2) * kBeta * (1 + 3 * kKappa * x^2)
//     dx    = dy * dgelu, rounded to bf16
// We compute the same function through the identity the forward uses (common/gpu/gelu.cuh): with the sigmoid
//     s = 1 / (1 + exp(-2 * inner)) = 0.5 * (1 + t),   and so   1 - t^2 = 4 * s * (1 - s),
//     dgelu = s + 2 * x * s * (1 - s) * kBeta * (1 + 3 * kKappa * x^2)
// Why not tanhf, as ATen does?
//   - Speed: tanhf is a library routine of about twenty instructions with a branch on |inner|, and a warp whose lanes
//     take both sides runs both; s is one MUFU.EX2 and one MUFU.RCP. The backward GEMM's epilogue (dgated_gemm.cu)
//     runs it on every element of dh in a few warps, which must keep pace with the memory.
//   - s is the forward's own: x * s is gelu_tanh_f32_ftz(x) bit for bit, so the epilogue computes s once for gelu(g)
//     (h and du) and for the derivative (dg).
//   - Accuracy: 1 + t cancels for negative x (t -> -1); s does not. Against a float64 derivative the result is within
//     one bf16 step on every bf16 input (tests/gpu_kernels_test.cpp tries all 65536); PyTorch's float32 formula is
//     close to it, not bit for bit (05's tests compare with a tolerance).
// Every kernel of this chapter that produces dg (eager's gelu_backward, the fused gelu_mul backward, the backward
// GEMM's epilogue) inlines these functions, and every rounding is pinned with an intrinsic, so they give bit-identical
// dg (as common/gpu/gelu.cuh does for the forward).
#pragma once

#include <cuda_bf16.h>

#include "gpu/gelu.cuh"  // ex2_ftz, rcp_ftz, kGeluBeta, kGeluKappa, kMinusTwoLog2e

namespace ch06 {

// s = 0.5 * (1 + tanh(inner)), computed as gelu_tanh_f32_ftz computes it: x * s is that function's value.
__device__ __forceinline__ float gelu_sigmoid_ftz(float x) {
  const float x_cube = __fmul_rn(__fmul_rn(x, x), x);
  const float inner = __fmul_rn(ladder::kGeluBeta, __fmaf_rn(ladder::kGeluKappa, x_cube, x));
  return ladder::rcp_ftz(__fadd_rn(1.0f, ladder::ex2_ftz(__fmul_rn(inner, ladder::kMinusTwoLog2e))));
}

// dgelu(x) from x and its s. The 2 of 2 * x * s * (1 - s) rides on the inner derivative: doubling is exact, so the
// rounded products are the same and the multiply by 2 is saved (the same bits on all 65536 bf16 inputs).
__device__ __forceinline__ float gelu_tanh_derivative_f32(float x, float s) {
  const float x_sq = __fmul_rn(x, x);
  const float twice_inner_derivative =
      __fmul_rn(2.0f * ladder::kGeluBeta, __fmaf_rn(3.0f * ladder::kGeluKappa, x_sq, 1.0f));
  const float s_one_minus_s = __fmul_rn(s, __fsub_rn(1.0f, s));
  return __fmaf_rn(__fmul_rn(x, s_one_minus_s), twice_inner_derivative, s);
}

__device__ __forceinline__ float gelu_tanh_backward_f32(float dy, float x) {
  return __fmul_rn(dy, gelu_tanh_derivative_f32(x, gelu_sigmoid_ftz(x)));
}

// One element of the backward of h = gelu(g) * u, given dh and a = gelu(g) as the forward stored it (rounded to bf16):
// what MulBackward0 then GeluBackward0 compute, with the same roundings (dh * u rounded to bf16, as eager stores it).
// `s` is gelu_sigmoid_ftz(g), where the caller has it already.
__device__ __forceinline__ void gelu_mul_backward_given_a(float dh, float g, float a, float s, float u,
                                                          __nv_bfloat16* dg, __nv_bfloat16* du) {
  *du = __float2bfloat16(__fmul_rn(dh, a));
  const float dh_u = __bfloat162float(__float2bfloat16(__fmul_rn(dh, u)));  // stored by eager
  *dg = __float2bfloat16(__fmul_rn(dh_u, gelu_tanh_derivative_f32(g, s)));
}

// The same from bf16 inputs, gelu(g) recomputed and rounded as the forward stored it. Every kernel that makes dg and du
// calls this, or (the backward GEMMs' epilogue, dgated_epilogue.cuh) the same operations on bf16 pairs.
__device__ __forceinline__ void gelu_mul_backward_one(__nv_bfloat16 dh, __nv_bfloat16 g, __nv_bfloat16 u,
                                                      __nv_bfloat16* dg, __nv_bfloat16* du) {
  const float fg = __bfloat162float(g);
  const float a = __bfloat162float(__float2bfloat16(ladder::gelu_tanh_f32(fg)));
  gelu_mul_backward_given_a(__bfloat162float(dh), fg, a, gelu_sigmoid_ftz(fg), __bfloat162float(u), dg, du);
}

}  // namespace ch06
