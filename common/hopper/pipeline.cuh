// What the ladder's Hopper GEMMs share, written once: the tile geometry, the shared-memory layout, the ring of
// pipeline stages and its barriers, the producer that fills it with TMA (x and a stacked gate/up weight tile), one
// stage of wgmma, the consumer's main loop, and the TMA store of a staged output tile. Chapter 04's variant files
// (1_teach.cu .. 5_fast.cu) show what each of its kernels does with these; 06's dgated_gemm.cu builds its own producer
// from the same ring.
//
// THE MACHINERY, in one paragraph each:
//  - TMA (cp.async.bulk.tensor): the copy engine moves whole 2-D tiles global -> shared, zero-filling rows and columns
//    past the matrix edges, and shared -> global for the output, clipping at the edges. So no bounds checks in the
//    kernels: any M, any dim and hidden that are multiples of 8 (TMA's 16-byte row rule) just work.
//  - mbarriers: a "full" barrier per pipeline stage (TMA says: the bytes have landed) and an "empty" one (the math
//    says: I am done reading this stage, refill it).
//  - Warp specialization: a producer warp only issues TMA loads; consumer warpgroups only issue wgmma and run the
//    epilogue. They meet only at the barriers, so loads for later k-tiles run while the tensor cores work.
//  - 128-byte swizzle: TMA writes each 64-element (128-byte) row of a tile with its 16-byte chunks XOR-permuted by the
//    row index (mod 8), which is the layout wgmma's shared-memory descriptors read without bank conflicts, and the one
//    the epilogue writes so that the TMA store can read it back (staging.cuh).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "hopper/ptx.cuh"

namespace hopper {

constexpr int kBK = 64;             // k extent of one pipeline stage: 64 bf16 = 128 bytes = one swizzled row
constexpr int kRowBytes = kBK * 2;  // bytes of one tile row in shared memory
constexpr int kWarpgroup = 128;     // threads of a warpgroup: 4 consecutive warps, the unit that issues wgmma
constexpr int kStoreCols = 64;      // output columns per TMA store box: 64 bf16 = 128 bytes, the swizzle width

// ---------------------------------------------------------------------------------------------------------------
// Shared memory of one block, as byte offsets from a 1024-byte-aligned base (the swizzle needs that alignment; the
// dynamic shared memory itself is only promised 16 bytes, so we allocate 1 KB more and round the base up).
//   kStages x [ x tile: kBM rows x 64 | weight tile: kBN/2 gate rows, then kBN/2 up rows, x 64 ]
//   kOutTiles x [ output tile: kOutRows rows x kBN/2 columns, as 64-column panels ]
//   mbarriers
template <int kBM, int kBN, int kStages, int kOutTiles, int kOutRows = kBM>
struct SmemLayout {
  static constexpr int kABytes = kBM * kRowBytes;
  static constexpr int kBHalfBytes = (kBN / 2) * kRowBytes;      // one of the two weight boxes
  static constexpr int kStageBytes = kABytes + 2 * kBHalfBytes;  // what TMA delivers per stage (expect_tx)
  static constexpr int kOutBytes = kOutRows * (kBN / 2) * 2;     // one output tile
  static constexpr int kOutOffset = kStages * kStageBytes;
  static constexpr int kBarrierOffset = kOutOffset + kOutTiles * kOutBytes;
  static constexpr int kBarriers = 2 * kStages + 2;  // full[], empty[], and the ping-pong turn barriers
  static constexpr int kBytes = kBarrierOffset + kBarriers * 8 + 1024;
  static_assert(kABytes % 1024 == 0 && kBHalfBytes % 1024 == 0 && kOutBytes % 1024 == 0,
                "every tile must start 1024-byte aligned for the 128-byte swizzle");
  static_assert(kBytes <= 227 * 1024, "more shared memory than an H100 block can have");
};

__device__ __forceinline__ uint8_t* align_1024(uint8_t* p) {
  const uint32_t a = smem_u32(p);
  return p + (((a + 1023) & ~1023u) - a);
}

// The ring's barriers, set up by one thread before anyone uses them: full[s] completes when the producer has
// announced stage s and TMA has landed its bytes; empty[s] when `readers` consumer warpgroups have released it.
template <int kStages>
__device__ __forceinline__ void init_ring(uint64_t* full, uint64_t* empty, int readers) {
  for (int s = 0; s < kStages; ++s) {
    mbar_init(&full[s], 1);  // the producer's arrive.expect_tx (plus the bytes)
    mbar_init(&empty[s], readers);
  }
}

// An MN-major weight tile (Major::MN) is panels of 64 columns, one 128-byte row per k: kBK rows, kMnPanelBytes apart.
constexpr int kMnPanelBytes = kBK * kRowBytes;

// A descriptor of the same tile `bytes` further on in shared memory: bytes / 16 more in its start address field (bits
// 0-13), which no address of the 228 KB window carries out of, so only the low word changes (one add, not a 64-bit
// add or a new descriptor).
__device__ __forceinline__ uint64_t desc_plus(uint64_t desc, uint32_t bytes) {
  return (desc & 0xFFFFFFFF00000000ull) | (static_cast<uint32_t>(desc) + (bytes >> 4));
}

// One stage's worth of math: for each of the 4 k-steps of 16 in the 64-wide stage, one wgmma per 64-row block of the
// x tile, all against the same stacked weight tile. a_tile and b_tile are the stage's shared addresses. With
// kB = Major::MN the weight tile is kN / 64 MN-major panels (+16 k is 16 rows on). The two descriptors are built once
// a stage; every k-step and row block steps them (desc_plus).
template <int kMBlocks, int kN, Major kB = Major::K>
__device__ __forceinline__ void mma_stage(float (&acc)[kMBlocks][kN / 2], uint32_t a_tile, uint32_t b_tile,
                                          bool accumulate) {
  const uint64_t a0 = sw128_kmajor_desc(a_tile);
  const uint64_t b0 = kB == Major::K ? sw128_kmajor_desc(b_tile) : sw128_mnmajor_desc(b_tile, kMnPanelBytes);
#pragma unroll
  for (int kk = 0; kk < kBK / 16; ++kk) {
    const uint64_t desc_b = desc_plus(b0, kB == Major::K ? kk * 32 : kk * 16 * kRowBytes);  // +16 k
#pragma unroll
    for (int b = 0; b < kMBlocks; ++b) {
      const uint64_t desc_a = desc_plus(a0, b * 64 * kRowBytes + kk * 32);
      const int acc_flag = (accumulate || kk > 0) ? 1 : 0;
      if constexpr (kN == 128)
        wgmma_m64n128k16<kB>(acc[b], desc_a, desc_b, acc_flag);
      else if constexpr (kN == 192)
        wgmma_m64n192k16<kB>(acc[b], desc_a, desc_b, acc_flag);
      else
        wgmma_m64n256k16<kB>(acc[b], desc_a, desc_b, acc_flag);
    }
  }
}

// Tile t -> (row block, column block), grouped: walk kGroupM row blocks down one column block, then the next column
// block, and only then the next kGroupM row blocks. Tiles running at the same time then share few weight tiles and
// few x tiles, so the L2 cache holds both (it matters once x and the weights outgrow L2, e.g. dim = 4096).
__device__ __forceinline__ void tile_coords(int t, int m_tiles, int n_tiles, int group_m, int& mb, int& nb) {
  const int per_group = group_m * n_tiles;
  const int first_m = (t / per_group) * group_m;
  const int rows = min(group_m, m_tiles - first_m);
  const int r = t % per_group;
  mb = first_m + r % rows;
  nb = r / rows;
}

// The producer of the persistent kernels (one thread): walk this block's tiles in order and, for each, its k-tiles,
// filling the ring. Ring position `pos` uses stage pos % kStages; before refilling a stage it waits until the
// consumers have released what it held kStages positions earlier.
template <class L, int kBM, int kBN, int kStages, int kGroupM>
__device__ __forceinline__ void produce_tiles(uint8_t* smem, uint64_t* full, uint64_t* empty, const CUtensorMap* map_x,
                                              const CUtensorMap* map_gate, const CUtensorMap* map_up,
                                              const CUtensorMap* map_m, int m_tiles, int n_tiles, int k_tiles) {
  prefetch_tensor_map(map_x);
  prefetch_tensor_map(map_gate);
  prefetch_tensor_map(map_up);
  prefetch_tensor_map(map_m);
  const int num_tiles = m_tiles * n_tiles;
  uint32_t pos = 0;
  for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
    int mb, nb;
    tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);
    for (int kt = 0; kt < k_tiles; ++kt, ++pos) {
      const uint32_t s = pos % kStages;
      if (pos >= kStages) mbar_wait(&empty[s], ((pos / kStages) - 1) & 1);
      uint8_t* a = smem + s * L::kStageBytes;
      uint8_t* b = a + L::kABytes;
      mbar_arrive_expect_tx(&full[s], L::kStageBytes);
      tma_load_2d(a, map_x, &full[s], kt * kBK, mb * kBM);
      tma_load_2d(b, map_gate, &full[s], kt * kBK, nb * (kBN / 2));
      tma_load_2d(b + L::kBHalfBytes, map_up, &full[s], kt * kBK, nb * (kBN / 2));
    }
  }
}

// Nothing to do while the tensor cores run (issue_k_tiles' default).
struct NoWork {
  __device__ void operator()(int) const {}
};

// The consumer's main loop over one tile's k-tiles, ring positions first .. first + k_tiles - 1, with two stages'
// wgmma in flight: after issuing k-tile kt, run while_running(kt) (4_overlap.cu: a chunk of the previous tile's
// epilogue, while the tensor cores work), then wait for k-tile kt - 1 and release its stage. Returns with the last
// k-tile's wgmma still running (finish_k_tiles waits for it), so a caller can do something in between. kB: how the
// weight tile lies (mma_stage).
template <class L, int kStages, int kMBlocks, int kBN, Major kB = Major::K, class WhileRunning = NoWork>
__device__ __forceinline__ void issue_k_tiles(float (&acc)[kMBlocks][kBN / 2], uint8_t* smem, uint64_t* full,
                                              uint64_t* empty, uint32_t first, int k_tiles, uint32_t a_offset,
                                              int thread, WhileRunning while_running = {}) {
  for (int kt = 0; kt < k_tiles; ++kt) {
    const uint32_t pos = first + kt;
    const uint32_t s = pos % kStages;
    mbar_wait(&full[s], (pos / kStages) & 1);
    const uint32_t a = smem_u32(smem + s * L::kStageBytes);
    wgmma_fence();
    mma_stage<kMBlocks, kBN, kB>(acc, a + a_offset, a + L::kABytes, kt > 0);
    wgmma_commit_group();
    while_running(kt);
    if (kt > 0) {
      wgmma_wait_group<1>();
      if (thread == 0) mbar_arrive(&empty[(pos - 1) % kStages]);
    }
  }
}

// Wait for the last k-tile's wgmma, and release its stage: the accumulators now hold the tile's g and u.
template <int kStages, int kMBlocks, int kN>
__device__ __forceinline__ void finish_k_tiles(float (&acc)[kMBlocks][kN], uint64_t* empty, uint32_t last, int thread) {
  wgmma_wait_group<0>();
  pin_accumulators(acc);
  if (thread == 0) mbar_arrive(&empty[last % kStages]);
}

// One thread stores a staged output tile (kRows rows, kCols columns, as 64-column panels) at (row0, col0) of m: one
// TMA store per panel, committed as one group. The staging tile must stay untouched until bulk_wait_group_read.
template <int kRows, int kCols>
__device__ __forceinline__ void store_tile(const CUtensorMap* map_m, const uint8_t* tile, int row0, int col0) {
  for (int p = 0; p < kCols / kStoreCols; ++p) tma_store_2d(map_m, tile + p * kRows * 128, col0 + p * kStoreCols, row0);
  bulk_commit_group();
}

}  // namespace hopper
