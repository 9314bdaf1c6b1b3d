// The epilogue mode's backward GEMM (Hopper, sm_90a only): dh = dy @ W_down, with the backward of h = gelu(g) * u in
// its epilogue, so dh never reaches memory. It is the mirror of chapter 04's gated forward GEMM, built from the same
// pieces in common/hopper/ (pipeline.cuh: the ring of stages, the producer's TMA loads, one stage of wgmma).
//
// Here the epilogue is the larger half of the work. Per element of dh it reads g and u and writes dg, du and h: 10
// bytes, 250 MB at the blog's shape, where the GEMM itself writes 50 MB; and it runs the GELU and its derivative (one
// exp2 and one reciprocal for both: gelu_backward.cuh). So the epilogue has warps of its own and runs beside the next
// tile's main loop, and g and u come to it the way the main loop's operands do, by TMA, ahead of need:
//  - Persistent: one block an SM walks 128 x 128 tiles of dh in groups of kGroupM row blocks (hopper's tile_coords), so
//    the blocks running at once share a few rows of dy. Two math warpgroups compute a tile (64 rows each, one wgmma
//    m64n128k16 per k-step), fed through a ring of four 32 KB stages.
//  - The producer warp has two loaders: lane 0 brings dy and W_down into the ring; lane 1 brings g and u into four
//    16 KB slots, a quarter tile (32 rows of each) a slot, as soon as the epilogue has read the slot's previous
//    quarter. So the next tile's g and u are on their way while this tile's epilogue runs, and an epilogue thread holds
//    no loads in flight: it only ever waits for data that has landed.
//  - When a tile's main loop is done, the math warpgroups round dh to bf16 (as cuBLAS stores it) into the 32 KB dh
//    buffer (stmatrix, the swizzled staging layout) and go on with the next tile. Seven epilogue warps read dh, g and u
//    from shared memory, 16 bytes each, and write dg, du and h straight to global memory, 16 bytes at a time; a warp's
//    32 vectors are two whole 256-byte rows, so every store is whole sectors. One dh buffer is enough: the epilogue has
//    the whole next main loop to read it.
//  - Shared memory: ring 128 KB + dh 32 KB + g/u 64 KB = 224 KB, all an H100 block may have.
//  - L2: the TMA loads of dy and W_down, which many blocks read again, carry an evict_last policy; those of g and u
//    evict_first, and dg, du and h are streaming stores: they pass through once and do not push the main loop's
//    operands out.
// What each of these choices measured against the alternatives is in bench/results/dgated_gemm.md.
// From dim 1536 on, launch_dgated_gemm (at the end) takes the kernel of dgated_gemm_wide.cu instead: 128 x 256 tiles,
// whose main loop is faster where the main loop is the larger half of the work.
// TMA does the main loop's edges (dy and W_down past the matrix load as zeros); the epilogue skips vectors past M
// rows or hidden columns (hidden is a multiple of 8, so a vector is wholly in or out). The weight operand is W_down
// [dim, hidden] as nn.Linear stores it: for dh = dy @ W_down its rows are k and its columns n, so its tile lies
// MN-major in shared memory (two 64-column panels of 64 rows), and the wgmma read it so (hopper::Major::MN); 04's
// weights, rows of k, are K-major.
//
// The numbers: dh is rounded to bf16 first, as cuBLAS stores it in the fused mode, then the one gelu_mul_backward
// arithmetic (gelu_backward.cuh), with gelu(g) computed once for dg, du and h (in its flush-to-zero form, the same
// bf16 on all 65536 inputs: 04's tests/gpu_arithmetic_test.cpp). Where this kernel's float32 sum rounds dh to the
// same bf16 as cuBLAS's, dg and du are the fused mode's bits; where the two sums round differently (their order
// differs), one dh differs by one step.
#include <tuple>

#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/dgated_epilogue.cuh"
#include "hopper/launch.h"
#include "hopper/map_cache.h"
#include "hopper/pipeline.cuh"
#include "hopper/staging.cuh"

namespace ch06 {
namespace {

using bf16 = __nv_bfloat16;
using hopper::kBK;
using hopper::kWarpgroup;

constexpr int kBM = 128, kBN = 128, kStages = 4, kGroupM = 8;
constexpr int kRows = kBM / 2;              // rows of the tile each math warpgroup computes
constexpr int kPairs = kBN / 4;             // bf16 pairs of dh each math thread has: 64 values
constexpr int kThreads = 4 * kWarpgroup;    // two math warpgroups, then seven epilogue warps and the producer's
constexpr int kEpilogueThreads = 2 * kWarpgroup - 32;
constexpr int kVectors = kBM * kBN / 8;     // 16-byte vectors of a tile
constexpr int kChunks = 4;                  // g and u arrive a quarter tile at a time
constexpr int kChunkRows = kBM / kChunks;   // 32 rows x 128 columns of g, then of u
constexpr int kChunkVectors = kVectors / kChunks;
constexpr int kGuPanelBytes = kChunkRows * 128;   // 32 rows x 64 columns of bf16: one TMA box
constexpr int kChunkBytes = 4 * kGuPanelBytes;    // g's two panels, then u's two
static_assert(kChunkVectors % 32 == 0, "a warp's 32 vectors must lie in one chunk");
static_assert(kEpilogueThreads < kChunkVectors, "every epilogue warp must visit every chunk");
// The ring, then one dh buffer (two 16 KB panels: two of the layout's output tiles) and the kChunks g/u slots (one
// output tile each).
using Smem = hopper::SmemLayout<kBM, kBN, kStages, 2 + kChunks>;
static_assert(Smem::kOutBytes == kChunkBytes, "a g/u slot is one of the layout's output tiles");
constexpr int kPanelBytes = kBM * 128;                  // 128 rows x 64 columns of bf16
constexpr int kGuOffset = Smem::kOutOffset + 2 * kPanelBytes;
constexpr int kSmemBytes = Smem::kBytes + 8 * 8;        // 18 barriers where the layout counts 10
static_assert(kSmemBytes <= 227 * 1024, "more shared memory than an H100 block can have");

// Where the epilogue writes, by plain pointers (row strides in elements).
struct Io {
  bf16 *dg, *du, *h;
  int64_t ld_dgu, M, hidden;
};

using dgated::backward_vector;
using dgated::ld_shared_v4;

// The epilogue of tile (mb, nb): dh is in the dh buffer, g and u arrive in the kChunks slots (chunk q holds rows
// 32q .. 32q + 31). Thread e takes column group e % 16 (8 columns, 16 bytes) of rows e / 16, e / 16 + kRowStep, ...:
// a warp's 32 vectors are two whole rows of one chunk, and a warp hands a slot back to the producer as soon as it has
// read its last rows there. Its column, and so the swizzle's chunk and the panel, stay the same all tile long; only
// the row moves, so each vector costs a few adds of addresses.
constexpr int kRowStep = kEpilogueThreads / 16;
__device__ __forceinline__ void epilogue_tile(const Io& io, int mb, int nb, uint32_t dh_tile, uint32_t gu,
                                              uint64_t* gu_full, uint64_t* gu_empty, uint32_t parity, int e) {
  const int group = e % 16;
  const int64_t r0 = int64_t(mb) * kBM, c = int64_t(nb) * kBN + 8 * group;
  // The tile's rows inside the matrix; none where this thread's column lies past hidden. Stores stop there.
  const int rows_in = c < io.hidden ? static_cast<int>(min(io.M - r0, int64_t(kBM))) : 0;
  unsigned row = e / 16;
  bf16 *dg = io.dg + (r0 + row) * io.ld_dgu + c, *du = io.du + (r0 + row) * io.ld_dgu + c;  // this row's vectors
  bf16* h_out = io.h + (r0 + row) * io.hidden + c;
  const int64_t dgu_step = kRowStep * io.ld_dgu, h_step = kRowStep * io.hidden;
  const uint32_t dh_panel = dh_tile + (group / 8) * kPanelBytes, gu_panel = gu + (group / 8) * kGuPanelBytes;
#pragma unroll 1
  for (int q = 0; q < kChunks; ++q) {
    hopper::mbar_wait(&gu_full[q], parity);
    const uint32_t slot = gu_panel + q * (kChunkBytes - kChunkRows * 128);  // row r of chunk q at slot + 128 r
#pragma unroll 1  // a loop: unrolled twice it measured no faster
    for (; row < (q + 1) * kChunkRows; row += kRowStep, dg += dgu_step, du += dgu_step, h_out += h_step) {
      const uint32_t in_row = row * 128 + (((group % 8) ^ (row % 8)) << 4);  // the 128-byte swizzle (staging.cuh)
      uint4 g = ld_shared_v4(slot + in_row), u = ld_shared_v4(slot + in_row + 2 * kGuPanelBytes), h;
      backward_vector(ld_shared_v4(dh_panel + in_row), g, u, h);
      if (static_cast<int>(row) < rows_in) {
        __stcs(reinterpret_cast<uint4*>(dg), g);  // streaming stores: written once
        __stcs(reinterpret_cast<uint4*>(du), u);
        __stcs(reinterpret_cast<uint4*>(h_out), h);
      }
    }
    __syncwarp();
    if (e % 32 == 0) hopper::mbar_arrive(&gu_empty[q]);
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    dgated_gemm_kernel(const __grid_constant__ CUtensorMap map_dy, const __grid_constant__ CUtensorMap map_w,
                       const __grid_constant__ CUtensorMap map_g, const __grid_constant__ CUtensorMap map_u,
                       const Io io, int m_tiles, int n_tiles, int k_tiles) {
  using L = Smem;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = hopper::align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;
  uint64_t* dh_full = empty + kStages;  // the math warpgroups have written the dh buffer
  uint64_t* dh_empty = dh_full + 1;     // the epilogue warps have read it
  uint64_t* gu_full = dh_empty + 1;     // [kChunks]: TMA has landed slot q's g and u
  uint64_t* gu_empty = gu_full + kChunks;  // [kChunks]: the epilogue warps have read slot q
  if (threadIdx.x == 0) {
    hopper::init_ring<kStages>(full, empty, 2);  // both math warpgroups read every stage
    hopper::mbar_init(dh_full, 2);
    hopper::mbar_init(dh_empty, kEpilogueThreads / 32);
    for (int q = 0; q < kChunks; ++q) {
      hopper::mbar_init(&gu_full[q], 1);
      hopper::mbar_init(&gu_empty[q], kEpilogueThreads / 32);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();
  const int num_tiles = m_tiles * n_tiles;
  const uint32_t dh_tile = hopper::smem_u32(smem + L::kOutOffset);
  const uint32_t gu = hopper::smem_u32(smem + kGuOffset);

  if (threadIdx.x >= 2 * kWarpgroup + kEpilogueThreads) {  // the producer warp: two lanes issue every TMA load
    const int lane = threadIdx.x % 32;
    if (lane == 0) {  // the main loop's operands, dy and W_down: read again by many tiles
      const uint64_t keep = hopper::l2_evict_last();
      uint32_t pos = 0;
      for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
        int mb, nb;
        hopper::tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);
        for (int kt = 0; kt < k_tiles; ++kt, ++pos) {
          const uint32_t s = pos % kStages;
          if (pos >= kStages) hopper::mbar_wait(&empty[s], ((pos / kStages) - 1) & 1);
          uint8_t* a = smem + s * L::kStageBytes;
          uint8_t* b = a + L::kABytes;
          hopper::mbar_arrive_expect_tx(&full[s], L::kStageBytes);
          hopper::tma_load_2d(a, &map_dy, &full[s], kt * kBK, mb * kBM, keep);                        // dy rows
          for (int p = 0; p < kBN / 64; ++p)  // W_down rows kt * 64 .., 64 columns a panel
            hopper::tma_load_2d(b + p * hopper::kMnPanelBytes, &map_w, &full[s], nb * kBN + 64 * p, kt * kBK, keep);
        }
      }
    } else if (lane == 1) {  // the epilogue's g and u, a chunk as soon as its slot is free: they pass through once
      const uint64_t stream = hopper::l2_evict_first();
      for (int i = 0, t = blockIdx.x; t < num_tiles; ++i, t += gridDim.x) {
        int mb, nb;
        hopper::tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);
        for (int q = 0; q < kChunks; ++q) {
          if (i >= 1) hopper::mbar_wait(&gu_empty[q], (i - 1) & 1);
          uint8_t* slot = smem + kGuOffset + q * kChunkBytes;
          const int row = mb * kBM + q * kChunkRows;
          hopper::mbar_arrive_expect_tx(&gu_full[q], kChunkBytes);
          hopper::tma_load_2d(slot, &map_g, &gu_full[q], nb * kBN, row, stream);
          hopper::tma_load_2d(slot + kGuPanelBytes, &map_g, &gu_full[q], nb * kBN + 64, row, stream);
          hopper::tma_load_2d(slot + 2 * kGuPanelBytes, &map_u, &gu_full[q], nb * kBN, row, stream);
          hopper::tma_load_2d(slot + 3 * kGuPanelBytes, &map_u, &gu_full[q], nb * kBN + 64, row, stream);
        }
      }
    }
    return;
  }

  if (threadIdx.x >= 2 * kWarpgroup) {  // the epilogue warps
    const int e = threadIdx.x - 2 * kWarpgroup;
    for (int i = 0, t = blockIdx.x; t < num_tiles; ++i, t += gridDim.x) {
      int mb, nb;
      hopper::tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);
      hopper::mbar_wait(dh_full, i & 1);
      epilogue_tile(io, mb, nb, dh_tile, gu, gu_full, gu_empty, i & 1, e);
      if (e % 32 == 0) hopper::mbar_arrive(dh_empty);  // the math may write the dh buffer again
    }
    return;
  }

  // The math warpgroups: each tile's main loop, then dh rounded to bf16 into the dh buffer, once the epilogue has
  // read what it held a tile ago (it has had this tile's whole main loop to do so).
  const int c = threadIdx.x / kWarpgroup, thread = threadIdx.x % kWarpgroup;
  float acc[1][kBN / 2];
  for (int i = 0, t = blockIdx.x; t < num_tiles; ++i, t += gridDim.x) {
    const uint32_t first = static_cast<uint32_t>(i) * k_tiles;
    hopper::issue_k_tiles<L, kStages, 1, kBN, hopper::Major::MN>(acc, smem, full, empty, first, k_tiles,
                                                                 c * kRows * hopper::kRowBytes, thread);
    hopper::finish_k_tiles<kStages, 1, kBN / 2>(acc, empty, first + k_tiles - 1, thread);
    if (i >= 1) hopper::mbar_wait(dh_empty, (i - 1) & 1);
#pragma unroll
    for (int j = 0; j < kPairs / 2; j += 2) {  // bf16 pairs 2j .. 2j + 3 of dh, rounded as cuBLAS rounds
      const float* a = &acc[0][4 * j];
      hopper::stage_four<kPanelBytes>(dh_tile, c * kRows, j, hopper::pack_bf16x2(a[0], a[1]),
                                      hopper::pack_bf16x2(a[2], a[3]), hopper::pack_bf16x2(a[4], a[5]),
                                      hopper::pack_bf16x2(a[6], a[7]), thread);
    }
    hopper::named_barrier_sync(1 + c, kWarpgroup);
    if (thread == 0) hopper::mbar_arrive(dh_full);
  }
}

// The tensor maps of one call (dy, W_down, g and u); the last few calls' maps are remembered (hopper/map_cache.h), so
// a training step called again with the same tensors encodes nothing.
struct Maps {
  CUtensorMap dy, w, g, u;
};
struct Key {
  int device = 0;
  const void *dy = nullptr, *w = nullptr, *g = nullptr, *u = nullptr;
  int64_t ld_gu = 0, M = 0, dim = 0, hidden = 0;
  auto fields() const { return std::tie(device, dy, w, g, u, ld_gu, M, dim, hidden); }
  bool operator==(const Key& o) const { return fields() == o.fields(); }
};

}  // namespace

void launch_dgated_gemm_narrow(const bf16* dy, const bf16* w_down, const bf16* g, const bf16* u, int64_t ld_gu,
                               bf16* dg, bf16* du, int64_t ld_dgu, bf16* h, int64_t M, int64_t dim, int64_t hidden,
                               cudaStream_t stream) {
  if (M == 0 || hidden == 0) return;
  static hopper::SmallCache<Key, Maps, 8> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const Maps maps = cache.get(Key{device, dy, w_down, g, u, ld_gu, M, dim, hidden}, [&] {
    const char* op = "dgated_gemm";
    return Maps{hopper::tile_map(dy, M, dim, dim, kBM, "dy", op),
                hopper::tile_map(w_down, dim, hidden, hidden, kBK, "W_down", op),
                hopper::tile_map(g, M, hidden, ld_gu, kChunkRows, "g", op),
                hopper::tile_map(u, M, hidden, ld_gu, kChunkRows, "u", op)};
  });
  hopper::allow_smem<dgated_gemm_kernel>(kSmemBytes);
  const int64_t m_tiles = hopper::ceil_div(M, kBM), n_tiles = hopper::ceil_div(hidden, kBN);
  const int64_t k_tiles = hopper::ceil_div(dim, kBK);
  const int grid = hopper::persistent_grid(m_tiles, n_tiles, k_tiles, "dgated_gemm");
  const Io io{dg, du, h, ld_dgu, M, hidden};
  dgated_gemm_kernel<<<grid, kThreads, kSmemBytes, stream>>>(maps.dy, maps.w, maps.g, maps.u, io,
                                                            static_cast<int>(m_tiles), static_cast<int>(n_tiles),
                                                            static_cast<int>(k_tiles));
  CUDA_CHECK_LAUNCH();
}

void launch_dgated_gemm(const bf16* dy, const bf16* w_down, const bf16* g, const bf16* u, int64_t ld_gu, bf16* dg,
                        bf16* du, int64_t ld_dgu, bf16* h, int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream) {
  // dgated_gemm.h says why dim decides; bench_train_mlp times both kernels at dims 768, 1536, 2048 and 4096.
  DgatedGemmLauncher* launch =
      dim >= kDgatedWideFromDim ? launch_dgated_gemm_wide : launch_dgated_gemm_narrow;
  launch(dy, w_down, g, u, ld_gu, dg, du, ld_dgu, h, M, dim, hidden, stream);
}

}  // namespace ch06
