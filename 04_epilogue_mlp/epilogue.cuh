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
// layout of a 64 x N/2 accumulator and is stored like any GEMM output (gate_times_up, stage_outputs below).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <cstring>

#include "04_epilogue_mlp/ptx.cuh"
#include "gpu/gelu.cuh"  // the one GELU, the one chapter 03's kernels inline, and its flush-to-zero form

namespace ch04 {

// bf16 pairs packed in 32 bits (low half = left column), the form F2FP makes, stmatrix stores and TMA moves. Turning
// a half back into a float32 is one integer instruction: a bf16 is the top 16 bits of the float with the same value.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {  // both rounded to nearest even
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  uint32_t bits;
  memcpy(&bits, &v, sizeof(bits));
  return bits;
}
__device__ __forceinline__ float bf16x2_lo(uint32_t p) { return __uint_as_float(p << 16); }
__device__ __forceinline__ float bf16x2_hi(uint32_t p) { return __uint_as_float(p & 0xFFFF0000u); }

// h * u for two bf16 pairs at once, rounded to nearest even, in one instruction (sm_90's bf16x2 multiply). The
// product of two bf16 values has at most 16 significant bits, so float32 holds it exactly and bf16(float(h) *
// float(u)) rounds the same exact product once: the same result as the float32 multiply for 3 fewer instructions per
// pair (no unpacking, one multiply, no repacking). tests/gpu_arithmetic_test.cpp checks all 2^32 pairs.
__device__ __forceinline__ uint32_t mul_bf16x2(uint32_t a, uint32_t b) {
  uint32_t r;
  asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

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

// THE STAGING TILE. A warpgroup's finished outputs go to shared memory in the layout the TMA store reads: panels of
// 64 columns (128 bytes per row, the swizzle width), rows 128 bytes apart, the 16-byte chunk j of row r stored at chunk
// j ^ (r % 8) (the 128-byte swizzle; the tile must be 1024-byte aligned). The swizzle also makes the stores
// conflict-free: the 8 rows of one 8 x 8 matrix land in 8 different chunk positions, so in 8 different groups of
// banks. This is the shared address of 8-column group `group` of row `row` (panels of kPanelBytes).
template <int kPanelBytes>
__device__ __forceinline__ uint32_t staged_address(uint32_t tile, int row, int group) {
  return tile + (group / 8) * kPanelBytes + row * 128 + (((group % 8) ^ (row % 8)) << 4);
}

// One stmatrix.x4 of output pairs out[2j .. 2j + 3] (column groups j and j + 1, top and bottom 8 rows of a 16-row
// warp slice) at rows row0 + 16 * warp ... of the staging tile. Lanes 8k..8k+7 give the row addresses of matrix k.
template <int kPanelBytes>
__device__ __forceinline__ void stage_four(uint32_t tile, int row0, int j, uint32_t r0, uint32_t r1, uint32_t r2,
                                           uint32_t r3, int thread) {
  const int warp = thread / 32, lane = thread % 32;
  const int matrix = lane / 8, row_in_matrix = lane % 8;  // whose row address this lane gives in each stmatrix.x4
  const int row = row0 + 16 * warp + 8 * (matrix & 1) + row_in_matrix;
  stmatrix_x4(staged_address<kPanelBytes>(tile, row, j + (matrix >> 1)), r0, r1, r2, r3);
}

// All of a warpgroup's outputs (kMBlocks x 64 rows, kN/2 columns) into the staging tile at `tile`.
template <int kMBlocks, int kN>
__device__ __forceinline__ void stage_outputs(const uint32_t (&out)[kMBlocks][kN / 8], uint32_t tile, int thread) {
  constexpr int kPanelBytes = kMBlocks * 64 * 128;
#pragma unroll
  for (int b = 0; b < kMBlocks; ++b)
#pragma unroll
    for (int j = 0; j < kN / 16; j += 2)
      stage_four<kPanelBytes>(tile, 64 * b, j, out[b][2 * j], out[b][2 * j + 1], out[b][2 * j + 2], out[b][2 * j + 3],
                              thread);
}

}  // namespace ch04
