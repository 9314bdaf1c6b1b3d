// The arithmetic both backward GEMMs (dgated_gemm.cu, dgated_gemm_wide.cu) run in their epilogue warps, one 16-byte
// vector (eight elements) at a time: from dh (rounded to bf16 already), g and u, it makes dg, du and h with the one
// gelu_mul_backward arithmetic (gelu_backward.cuh), gelu(g) computed once for all three.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "06_train_mlp/gelu_backward.cuh"
#include "hopper/staging.cuh"

namespace ch06 {
namespace dgated {

using bf16 = __nv_bfloat16;

__device__ __forceinline__ uint32_t pack(bf16 lo, bf16 hi) {
  return uint32_t(__bfloat16_as_ushort(lo)) | (uint32_t(__bfloat16_as_ushort(hi)) << 16);
}

__device__ __forceinline__ uint4 ld_shared_v4(uint32_t address) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(address));
  return v;
}

// One element: dg and du from dh, g and u, and h = gelu(g) * u; the sigmoid s computed once for gelu(g) = g * s
// (gelu_tanh_f32_ftz(g), as the forward stored it) and for its derivative.
__device__ __forceinline__ void backward_one(float dh, float g, float u, bf16* dg, bf16* du, bf16* h) {
  const float s = gelu_sigmoid_ftz(g);
  const float a = __bfloat162float(__float2bfloat16(__fmul_rn(g, s)));
  gelu_mul_backward_given_a(dh, g, a, s, u, dg, du);
  *h = __float2bfloat16(__fmul_rn(a, u));  // as 03's gelu_mul made it
}

// Eight elements (one 16-byte vector of each): g and u are overwritten with dg and du.
__device__ __forceinline__ void backward_vector(const uint4& dh, uint4& g, uint4& u, uint4& h) {
  const uint32_t* pdh = &dh.x;
  uint32_t *pg = &g.x, *pu = &u.x, *ph = &h.x;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    bf16 dg[2], du[2], hh[2];
    backward_one(hopper::bf16x2_lo(pdh[k]), hopper::bf16x2_lo(pg[k]), hopper::bf16x2_lo(pu[k]), &dg[0], &du[0], &hh[0]);
    backward_one(hopper::bf16x2_hi(pdh[k]), hopper::bf16x2_hi(pg[k]), hopper::bf16x2_hi(pu[k]), &dg[1], &du[1], &hh[1]);
    pg[k] = pack(dg[0], dg[1]);
    pu[k] = pack(du[0], du[1]);
    ph[k] = pack(hh[0], hh[1]);
  }
}

}  // namespace dgated
}  // namespace ch06
