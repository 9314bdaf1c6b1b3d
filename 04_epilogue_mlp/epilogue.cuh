// Chapter 04's epilogue: how g and u meet in one thread, the arithmetic that turns them into m = gelu(g) * u with
// eager PyTorch's roundings, and the staging of the results in shared memory for the TMA store.
//
// HOW g AND u MEET IN ONE THREAD. wgmma (the Hopper warpgroup matrix instruction) multiplies a 64-row tile of x by a
// tile of N weight rows and leaves a 64 x N float32 accumulator spread over the 128 threads of a warpgroup. Its
// layout: thread t holds rows {r, r + 8} (r = 16 * warp + lane / 4) and, in every group of 8 columns, the two
// columns {2 * (lane % 4), 2 * (lane % 4) + 1}. So every thread holds the SAME column positions in every 8-column
// group. Now stack the weight tile: its first N/2 rows are rows [n0, n0 + N/2) of W_gate, its last N/2 rows are the
// same rows of W_up (two TMA loads into one shared-memory tile; W_gate and W_up stay as nn.Linear stores them). Then
// accumulator column c < N/2 is g[:, n0 + c] and column c + N/2 is u[:, n0 + c], and both are in the same thread,
// in registers acc[i] and acc[i + N/4]. The epilogue computes gelu(g) * u register to register; the result has the
// layout of a 64 x N/2 accumulator and is stored like any GEMM output (gate_times_up below, then hopper/staging.cuh's
// stage_outputs).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <cstring>

#include "gpu/gelu.cuh"        // the one GELU, the one chapter 03's kernels inline, and its flush-to-zero form
#include "hopper/staging.cuh"  // bf16 pairs and the staging tile

namespace ch04 {

using namespace hopper;  // the Hopper machinery (common/hopper/), by its plain names

// Two adjacent outputs from a pair of g values and the pair of u values of the same columns, each pair already
// rounded to bf16 (as eager's two GEMMs store g and u): gelu(g) rounded to bf16 (as eager's gelu stores it), times u,
// rounded to bf16 (as eager's mul stores it). Returns the output pair packed.
__device__ __forceinline__ uint32_t gelu_times_up_bf16x2(uint32_t g, uint32_t u) {
  const uint32_t h = pack_bf16x2(ladder::gelu_tanh_f32(bf16x2_lo(g)), ladder::gelu_tanh_f32(bf16x2_hi(g)));
  return pack_bf16x2(__fmul_rn(bf16x2_lo(h), bf16x2_lo(u)), __fmul_rn(bf16x2_hi(h), bf16x2_hi(u)));
}

// The same two outputs, the same bits, fewer instructions ("fast"): the GELU's two special functions in their
// flush-to-zero forms (gelu.cuh) and the final multiply as one bf16x2 instruction.
__device__ __forceinline__ uint32_t gelu_times_up_bf16x2_fast(uint32_t g, uint32_t u) {
  const uint32_t h = pack_bf16x2(ladder::gelu_tanh_f32_ftz(bf16x2_lo(g)), ladder::gelu_tanh_f32_ftz(bf16x2_hi(g)));
  return mul_bf16x2(h, u);
}

// THE PAIRING. acc[b] is the fragment of one m64nN wgmma over a stacked weight tile (N/2 gate rows, then N/2 up
// rows). Register i < N/4 holds a gate column c = 8 * (i / 4) + 2 * (lane % 4) + i % 2; register i + N/4 holds column
// c + N/2 of the same row: the up value of the same hidden unit. So gelu(g) * u is register to register, and out[b]
// (N/8 packed pairs) has the layout of an m64n(N/2) fragment: out[b][2j + h] holds row 16 * warp + lane / 4 + 8 * h,
// columns 8j + 2 * (lane % 4) + {0, 1}. g and u are rounded to bf16 first, as eager's GEMMs store them.
template <int kMBlocks, int kN>
__device__ __forceinline__ void gate_times_up(const float (&acc)[kMBlocks][kN / 2], uint32_t (&out)[kMBlocks][kN / 8]) {
  constexpr int kUp = kN / 4;  // first register of the up half
#pragma unroll
  for (int b = 0; b < kMBlocks; ++b)
#pragma unroll
    for (int i = 0; i < kN / 4; i += 2)
      out[b][i / 2] = gelu_times_up_bf16x2(pack_bf16x2(acc[b][i], acc[b][i + 1]),
                                           pack_bf16x2(acc[b][kUp + i], acc[b][kUp + i + 1]));
}

}  // namespace ch04
