// The overlap pipeline, one owner for 4_overlap.cu and 5_fast.cu: coop (3_coop.cu), and each consumer runs the
// epilogue of its previous tile INSIDE the main loop of its next one. At the end of a tile's main loop the consumer
// only rounds its 128 accumulators to 64 packed bf16 pairs (g and u, as eager stores them: 64 instructions); the
// accumulators are then free for the next tile, and the GELU, multiply and stmatrix of the held pairs run in kChunks
// chunks, one after issuing the wgmma of each of the next tile's first kChunks k-tiles (issue_k_tiles' while_running),
// while the tensor cores work through them. Same warp, program order: the wgmma are always issued before the chunk, so
// the tensor cores always have work queued. A block's last tile has nothing to hide behind; its epilogue runs after
// the loop. The one template flag, kFast, picks the epilogue's arithmetic (epilogue.cuh): the exact GELU and multiply
// (4_overlap.cu) or their cheapest forms that give the same bits (5_fast.cu).
#pragma once

#include "04_epilogue_mlp/epilogue.cuh"
#include "04_epilogue_mlp/launch.h"
#include "hopper/pipeline.cuh"

namespace ch04 {
namespace overlap {

constexpr int kBM = 128, kBN = 256, kStages = 4, kGroupM = 16, kChunks = 8;
constexpr int kRows = kBM / 2;        // rows of x (and m) one consumer computes per tile: its half
constexpr int kMBlocks = kRows / 64;  // wgmma per k-step: one per 64-row block
using L = SmemLayout<kBM, kBN, kStages, 2, kRows>;
constexpr int kThreads = 3 * kWarpgroup;  // producer warpgroup + two consumer warpgroups
// The consumers hold 128 accumulators and 64 packed pairs: give them 240 registers, the producer the minimum, 24.
constexpr int kProducerRegs = 24, kConsumerRegs = 240;
static_assert(kWarpgroup * kProducerRegs + 2 * kWarpgroup * kConsumerRegs <= 65536, "register file");

// One chunk of the held tile's epilogue: pairs [kCh * kPairs, (kCh + 1) * kPairs) of this thread's 32 packed output
// pairs (kPairs = 32 / kChunks; output column groups kCh * kPairs / 2 ...), computed in place over the g pairs, then
// their stmatrix.x4 (one per 4 pairs) into the staging tile.
template <bool kFast, int kCh>
__device__ __forceinline__ void epilogue_chunk(uint32_t (&held_g)[32], const uint32_t (&held_u)[32], uint32_t tile,
                                               int thread) {
  constexpr int kPairs = 32 / kChunks;
  static_assert(kPairs % 4 == 0, "a chunk must fill whole stmatrix.x4");
#pragma unroll
  for (int k = kCh * kPairs; k < (kCh + 1) * kPairs; ++k)
    held_g[k] = kFast ? gelu_times_up_bf16x2_fast(held_g[k], held_u[k]) : gelu_times_up_bf16x2(held_g[k], held_u[k]);
#pragma unroll
  for (int j = kCh * kPairs / 2; j < (kCh + 1) * kPairs / 2; j += 2)
    stage_four<kRows * 128>(tile, 0, j, held_g[2 * j], held_g[2 * j + 1], held_g[2 * j + 2], held_g[2 * j + 3], thread);
}

// Run chunk `ch`, a run-time value, through compile-time instances (a chain of ifs), so the register arrays are
// indexed with constants only (a run-time index would move them to local memory).
template <bool kFast, int kK = 0>
__device__ __forceinline__ void epilogue_chunk_at(int ch, uint32_t (&held_g)[32], const uint32_t (&held_u)[32],
                                                  uint32_t tile, int thread) {
  if constexpr (kK < kChunks) {
    if (ch == kK)
      epilogue_chunk<kFast, kK>(held_g, held_u, tile, thread);
    else
      epilogue_chunk_at<kFast, kK + 1>(ch, held_g, held_u, tile, thread);
  }
}

// After the last chunk: make the stmatrix writes visible to the copy engine, and one thread stores the tile.
__device__ __forceinline__ void store_held(const CUtensorMap* map_m, uint8_t* tile, int c, int thread, int row0,
                                           int col0) {
  fence_view_async_shared();
  named_barrier_sync(1 + c, kWarpgroup);
  if (thread == 0) store_tile<kRows, kBN / 2>(map_m, tile, row0, col0);
}

// The kernel, for a __global__ of 4_overlap.cu or 5_fast.cu to call: kFast picks the epilogue's arithmetic.
template <bool kFast>
__device__ __forceinline__ void geglu_gemm_overlap(const CUtensorMap& map_x, const CUtensorMap& map_gate,
                                                   const CUtensorMap& map_up, const CUtensorMap& map_m, int m_tiles,
                                                   int n_tiles, int k_tiles) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;

  if (threadIdx.x == 0) {
    init_ring<kStages>(full, empty, 2);  // both consumers read every stage
    fence_barrier_init();
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / kWarpgroup;
  const int thread = threadIdx.x % kWarpgroup;
  const int num_tiles = m_tiles * n_tiles;

  if (warpgroup == 0) {
    // ---- Producer.
    warpgroup_release_registers<kProducerRegs>();
    if (thread == 0)
      produce_tiles<L, kBM, kBN, kStages, kGroupM>(smem, full, empty, &map_x, &map_gate, &map_up, &map_m, m_tiles,
                                                   n_tiles, k_tiles);
    return;
  }

  // ---- Consumers.
  warpgroup_claim_registers<kConsumerRegs>();
  const int c = warpgroup - 1;
  uint8_t* tile = smem + L::kOutOffset + c * L::kOutBytes;  // this consumer's output staging tile
  const uint32_t a_offset = c * kRows * kRowBytes;          // our half of the x tile
  float acc[kMBlocks][kBN / 2];
  uint32_t held_g[32], held_u[32];  // the previous tile's g and u, rounded to bf16, in pairs
  bool holding = false;
  int held_row = 0, held_col = 0;  // where the held tile goes in m

  for (int i = 0;; ++i) {  // both consumers take every tile of the block
    const int t = blockIdx.x + i * gridDim.x;
    if (t >= num_tiles) break;
    int mb, nb;
    tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);

    // Main loop (pipeline.cuh), opened up: after issuing k-tile kt's wgmma, a chunk of the previous tile's epilogue.
    const uint32_t first = static_cast<uint32_t>(i) * k_tiles;
    issue_k_tiles<L, kStages, kMBlocks, kBN>(acc, smem, full, empty, first, k_tiles, a_offset, thread, [&](int kt) {
      if (holding && kt < kChunks) {  // while the tensor cores run: a chunk of the previous tile's epilogue
        epilogue_chunk_at<kFast>(kt, held_g, held_u, smem_u32(tile), thread);
        if (kt == kChunks - 1) store_held(&map_m, tile, c, thread, held_row, held_col);
      }
    });
    if (holding && k_tiles < kChunks) {  // short main loops (dim <= 448): the chunks that did not fit
      for (int ch = k_tiles; ch < kChunks; ++ch) epilogue_chunk_at<kFast>(ch, held_g, held_u, smem_u32(tile), thread);
      store_held(&map_m, tile, c, thread, held_row, held_col);
    }
    finish_k_tiles<kStages>(acc, empty, first + k_tiles - 1, thread);

    // Hold this tile: round g and u to bf16 pairs (as eager's GEMMs store them). The accumulators are free again.
#pragma unroll
    for (int k = 0; k < 32; ++k) {
      held_g[k] = pack_bf16x2(acc[0][2 * k], acc[0][2 * k + 1]);
      held_u[k] = pack_bf16x2(acc[0][kBN / 4 + 2 * k], acc[0][kBN / 4 + 2 * k + 1]);
    }
    holding = true;
    held_row = mb * kBM + c * kRows;
    held_col = nb * (kBN / 2);
    // The staging tile must be free before the next tile's chunks write it: the store issued one tile ago has long
    // finished reading it, so this wait costs nothing in steady state.
    if (thread == 0) bulk_wait_group_read<0>();
    named_barrier_sync(1 + c, kWarpgroup);
  }
  if (holding) {  // the block's last tile: nothing left to overlap with
    for (int ch = 0; ch < kChunks; ++ch) epilogue_chunk_at<kFast>(ch, held_g, held_u, smem_u32(tile), thread);
    store_held(&map_m, tile, c, thread, held_row, held_col);
  }
  if (thread == 0) bulk_wait_group<0>();
}

// Its launcher, for `kernel`, the __global__ that calls geglu_gemm_overlap, under the variant name `name`.
template <auto kernel>
void launch_overlap_kernel(const char* name, const __nv_bfloat16* x, const __nv_bfloat16* w_gate,
                           const __nv_bfloat16* w_up, __nv_bfloat16* m, int64_t M, int64_t dim, int64_t hidden,
                           cudaStream_t stream) {
  if (!check_launch(name, x, w_gate, w_up, m, M, dim, hidden, stream)) return;
  const int64_t m_tiles = ceil_div(M, kBM), n_tiles = ceil_div(hidden, kBN / 2), k_tiles = ceil_div(dim, kBK);
  const int grid = persistent_grid(m_tiles, n_tiles, k_tiles, "geglu_gemm");
  const TileMaps maps = tile_maps(x, w_gate, w_up, m, M, dim, hidden, kBM, kBN / 2, kRows);
  allow_smem<kernel>(L::kBytes);
  kernel<<<grid, kThreads, L::kBytes, stream>>>(maps.x, maps.gate, maps.up, maps.m, static_cast<int>(m_tiles),
                                                static_cast<int>(n_tiles), static_cast<int>(k_tiles));
  CUDA_CHECK_LAUNCH();
}

}  // namespace overlap
}  // namespace ch04
