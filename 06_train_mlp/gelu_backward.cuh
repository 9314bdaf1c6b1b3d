// The derivative of the tanh-approximated GELU, in float32, as PyTorch's eager aten::gelu_backward computes it
// (GeluBackwardCUDAKernelImpl, approximate="tanh", in ATen's ActivationGeluKernel.cu), for a bf16 tensor:
//     inner = kBeta * (x + kKappa * x^3)                t = tanh(inner)
//     left  = 0.5 * x                                   right = 1 + t
//     dgelu = 0.5 * right + left * (1 - t^2) * kBeta * (1 + 3 * kKappa * x^2)
//     dx    = dy * dgelu, rounded to bf16
// Both kernels of this chapter that produce dg (eager's gelu_backward and the fused gelu_mul backward) inline this
// one function, and every rounding is pinned with an intrinsic, so the two give bit-identical dg (as
// common/gpu/gelu.cuh does for the forward). tanhf is the accurate library routine: these kernels are memory-bound,
// the arithmetic hides under the loads.
#pragma once

#include <cuda_bf16.h>

#include "gpu/gelu.cuh"  // kGeluBeta, kGeluKappa

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

}  // namespace ch06
