// The bf16 pairs and the staging tile of the ladder's Hopper GEMMs' epilogues: results packed two to a 32-bit
// register (the form F2FP makes, stmatrix stores and TMA moves), and the layout in shared memory that the TMA store
// reads (the 128-byte swizzle). Chapter 04's epilogue (04_epilogue_mlp/epilogue.cuh) and 06's dgated_gemm.cu stage
// their outputs with these.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <cstring>

#include "hopper/ptx.cuh"

namespace hopper {

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
// pair (no unpacking, one multiply, no repacking). 04_epilogue_mlp/tests/gpu_arithmetic_test.cpp checks all 2^32
// pairs.
__device__ __forceinline__ uint32_t mul_bf16x2(uint32_t a, uint32_t b) {
  uint32_t r;
  asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
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

}  // namespace hopper
