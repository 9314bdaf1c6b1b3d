// The arithmetic both backward GEMMs (dgated_gemm.cu, dgated_gemm_wide.cu) run in their epilogue warps, one 16-byte
// vector (eight elements) at a time: from dh (rounded to bf16 already), g and u, it makes dg, du and h with the
// gelu_mul_backward arithmetic of gelu_backward.cuh, gelu(g) computed once for all three.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "06_train_mlp/gelu_backward.cuh"
#include "hopper/staging.cuh"

namespace ch06 {
namespace dgated {

__device__ __forceinline__ uint4 ld_shared_v4(uint32_t address) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(address));
  return v;
}

// Two elements, packed as bf16 pairs: g and u are overwritten with dg and du, h is gelu(g) * u. The operations of
// gelu_mul_backward_one, two at a time; its three products of two bf16 values (dh * u, dh * gelu(g), gelu(g) * u) are
// one bf16x2 multiply each. Such a product is exact in float32, so rounding it once to bf16 gives the bits of the
// float32 multiply and rounding (hopper/staging.cuh's mul_bf16x2; 04's arithmetic test tries every pair): three
// instructions a pair, where float32 takes six multiplies, three conversions and the unpacking of dh and u. With these
// cuts the epilogue warps' arithmetic hides behind their loads and stores (bench/results/dgated_gemm.md).
__device__ __forceinline__ void backward_pair(uint32_t dh, uint32_t& g, uint32_t& u, uint32_t& h) {
  const float g0 = hopper::bf16x2_lo(g), g1 = hopper::bf16x2_hi(g);
  const float s0 = gelu_sigmoid_ftz(g0), s1 = gelu_sigmoid_ftz(g1);
  const uint32_t a = hopper::pack_bf16x2(__fmul_rn(g0, s0), __fmul_rn(g1, s1));  // gelu(g), as the forward stored it
  const uint32_t dh_u = hopper::mul_bf16x2(dh, u);                               // as eager stores it
  h = hopper::mul_bf16x2(a, u);                                                  // as 03's gelu_mul made it
  u = hopper::mul_bf16x2(dh, a);                                                 // du
  g = hopper::pack_bf16x2(__fmul_rn(hopper::bf16x2_lo(dh_u), gelu_tanh_derivative_f32(g0, s0)),
                          __fmul_rn(hopper::bf16x2_hi(dh_u), gelu_tanh_derivative_f32(g1, s1)));  // dg
}

// Eight elements (one 16-byte vector of each): g and u are overwritten with dg and du.
__device__ __forceinline__ void backward_vector(const uint4& dh, uint4& g, uint4& u, uint4& h) {
  const uint32_t* pdh = &dh.x;
  uint32_t *pg = &g.x, *pu = &u.x, *ph = &h.x;
#pragma unroll
  for (int k = 0; k < 4; ++k) backward_pair(pdh[k], pg[k], pu[k], ph[k]);
}

}  // namespace dgated
}  // namespace ch06
