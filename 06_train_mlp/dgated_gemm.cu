// The epilogue mode's backward GEMM (Hopper, sm_90a only): dh = dy @ W_down, with the backward of h = gelu(g) * u in
// its epilogue, so dh never reaches memory. It is the mirror of chapter 04's gated forward GEMM, built from the same
// pieces in common/hopper/ (pipeline.cuh: the ring of stages, the producer's TMA loads, one stage of wgmma).
//
// Here the epilogue is the larger half of the work. Per element of dh it reads g and u and writes dg, du and h: 10
// bytes, 250 MB at the blog's shape, where the GEMM itself writes 50 MB; and it runs the GELU and its derivative (one
// exp2 and one reciprocal for both: gelu_backward.cuh). So the epilogue has warps of its own, and runs beside the
// next tile's main loop instead of after it:
//  - Persistent: one block an SM walks 128 x 128 tiles of dh in groups of kGroupM row blocks (04's tile_coords), so
//    the blocks running at once share a few rows of dy and read g and u a few whole rows at a time. Two math
//    warpgroups compute a tile (64 rows each, one wgmma m64n128k16 per k-step), fed by a producer warp through a ring
//    of four 32 KB stages.
//  - When a tile's main loop is done, the math warpgroups round dh to bf16 (as cuBLAS stores it), write it to one of
//    two 32 KB dh buffers in shared memory (stmatrix, 04's swizzled staging layout) and go straight on to the next
//    tile. Seven epilogue warps take it from there: each thread reads 16 bytes of g and of u from global memory
//    (loads sent before it waits for dh, so they fly meanwhile), 16 bytes of dh from shared memory, and writes 16
//    bytes of dg, du and h straight to global memory, 5 vectors at a time, twice a tile. A warp covers two whole
//    256-byte rows, so every access is whole sectors. Only dh passes through shared memory: the ring keeps its four
//    stages, and no store waits for a staging tile to drain.
//  - L2: the TMA loads of dy and W_down^T, which many blocks read again, carry an evict_last policy; g, u, dg, du and
//    h pass through once, so they stream (ld.global.cs / st.global.cs) and do not push the main loop's operands out.
//  - Registers: 512 threads an SM leave 128 a thread, about what the math needs, so an epilogue thread holds one batch
//    of g and u at a time, and the two batches of a tile are a loop (the same work unrolled into straight-line code
//    measured slower). Nsight Compute sees the kernel wait on its loads: DRAM at 51% of peak, the SM issuing in half
//    its cycles.
// What each of these choices measured against the alternatives is in bench/results/dgated_gemm.md.
// TMA does the main loop's edges (dy and W_down^T past the matrix load as zeros); the epilogue skips vectors past M
// rows or hidden columns (hidden is a multiple of 8, so a vector is wholly in or out). The weight operand is W_down^T
// [hidden, dim], K-major like 04's weights: the op makes it with a transposing copy (dgated_gemm_op.cu).
//
// The numbers: dh is rounded to bf16 first, as cuBLAS stores it in the fused mode, then the one gelu_mul_backward
// arithmetic (gelu_backward.cuh), with gelu(g) computed once for dg, du and h (in its flush-to-zero form, the same
// bf16 on all 65536 inputs: 04's tests/gpu_arithmetic_test.cpp). Where this kernel's float32 sum rounds dh to the
// same bf16 as cuBLAS's, dg and du are the fused mode's bits; where the two sums round differently (their order
// differs), one dh differs by one step.
#include <tuple>

#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/gelu_backward.cuh"
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
constexpr int kBatch = 5;                   // 16-byte vectors of g and u an epilogue thread has in flight
constexpr int kVectors = kBM * kBN / 8;     // of a tile
constexpr int kBatches = 2;                 // a tile's vectors, kBatch a thread at a time: 2 x 5 x 224 >= 2048
static_assert(kBatches * kBatch * kEpilogueThreads >= kVectors, "the batches must cover the tile");
using Smem = hopper::SmemLayout<kBM, kBN, kStages, 4>;  // the ring, then two dh buffers of two 16 KB panels each
constexpr int kPanelBytes = kBM * 128;                // 128 rows x 64 columns of bf16
constexpr int kTileBytes = 2 * kPanelBytes;           // one 128 x 128 dh buffer
constexpr int kSmemBytes = Smem::kBytes + 16;         // two barriers more than the layout counts
static_assert(kSmemBytes <= 227 * 1024, "more shared memory than an H100 block can have");

// Where the epilogue reads and writes, by plain pointers (row strides in elements).
struct Io {
  const bf16 *g, *u;
  bf16 *dg, *du, *h;
  int64_t ld_gu, ld_dgu, M, hidden;
};

__device__ __forceinline__ uint32_t pack(bf16 lo, bf16 hi) {
  return uint32_t(__bfloat16_as_ushort(lo)) | (uint32_t(__bfloat16_as_ushort(hi)) << 16);
}

// One element: dg and du from dh (rounded to bf16 already), g and u, and h = gelu(g) * u; the sigmoid s computed once
// for gelu(g) = g * s (gelu_tanh_f32_ftz(g), as the forward stored it) and for its derivative.
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

// The epilogue of tile (mb, nb), whose dh is in buffer `tile` once dh_full completes phase `parity`: batch by batch,
// the thread's g and u vectors loaded, then dh read and dg, du, h written. Vector v of the tile is row v / 16, columns
// 8 (v % 16) ... + 7: a warp's 32 vectors are two whole rows.
__device__ __forceinline__ void epilogue_tile(const Io& io, int mb, int nb, uint32_t tile, uint64_t* dh_full,
                                              uint32_t parity, int e) {
#pragma unroll 1  // a loop, not straight-line code (the compiler's schedule of that was 18% slower)
  for (int b = 0; b < kBatches; ++b) {
    const auto where = [&](int j, int& v, int64_t& r, int64_t& c) {
      v = e + (b * kBatch + j) * kEpilogueThreads;
      r = int64_t(mb) * kBM + v / 16;
      c = int64_t(nb) * kBN + 8 * (v % 16);
      return v < kVectors && r < io.M && c < io.hidden;
    };
    uint4 g[kBatch], u[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      int v;
      int64_t r, c;
      if (where(j, v, r, c)) {  // streaming loads: read once, not worth keeping in L1 or L2
        g[j] = __ldcs(reinterpret_cast<const uint4*>(io.g + r * io.ld_gu + c));
        u[j] = __ldcs(reinterpret_cast<const uint4*>(io.u + r * io.ld_gu + c));
      }
    }
    if (b == 0) hopper::mbar_wait(dh_full, parity);  // the first batch's loads fly meanwhile
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      int v;
      int64_t r, c;
      if (!where(j, v, r, c)) continue;
      uint4 dh, h;
      asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(dh.x), "=r"(dh.y), "=r"(dh.z), "=r"(dh.w)
                   : "r"(hopper::staged_address<kPanelBytes>(tile, v / 16, v % 16)));
      backward_vector(dh, g[j], u[j], h);
      __stcs(reinterpret_cast<uint4*>(io.dg + r * io.ld_dgu + c), g[j]);
      __stcs(reinterpret_cast<uint4*>(io.du + r * io.ld_dgu + c), u[j]);
      __stcs(reinterpret_cast<uint4*>(io.h + r * io.hidden + c), h);
    }
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    dgated_gemm_kernel(const __grid_constant__ CUtensorMap map_dy, const __grid_constant__ CUtensorMap map_wt,
                       const Io io, int m_tiles, int n_tiles, int k_tiles) {
  using L = Smem;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = hopper::align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;
  uint64_t* dh_full = empty + kStages;  // [2]: the math warpgroups have written dh buffer b
  uint64_t* dh_empty = dh_full + 2;     // [2]: the epilogue warps have read it
  if (threadIdx.x == 0) {
    hopper::init_ring<kStages>(full, empty, 2);  // both math warpgroups read every stage
    for (int b = 0; b < 2; ++b) {
      hopper::mbar_init(&dh_full[b], 2);
      hopper::mbar_init(&dh_empty[b], kEpilogueThreads / 32);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();
  const int num_tiles = m_tiles * n_tiles;
  const uint32_t dh_base = hopper::smem_u32(smem + L::kOutOffset);  // buffer b at dh_base + b * kTileBytes

  if (threadIdx.x >= 2 * kWarpgroup + kEpilogueThreads) {  // the producer: one lane issues every TMA load
    if (threadIdx.x != 2 * kWarpgroup + kEpilogueThreads) return;
    const uint64_t keep = hopper::l2_evict_last();  // dy and W_down^T: read again by many tiles
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
        hopper::tma_load_2d(b, &map_wt, &full[s], kt * kBK, nb * kBN, keep);                        // W_down^T rows..
        hopper::tma_load_2d(b + L::kBHalfBytes, &map_wt, &full[s], kt * kBK, nb * kBN + kBN / 2, keep);  // ..+ 128
      }
    }
    return;
  }

  if (threadIdx.x >= 2 * kWarpgroup) {  // the epilogue warps
    const int e = threadIdx.x - 2 * kWarpgroup;
    for (int i = 0, t = blockIdx.x; t < num_tiles; ++i, t += gridDim.x) {
      int mb, nb;
      hopper::tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);
      epilogue_tile(io, mb, nb, dh_base + (i & 1) * kTileBytes, &dh_full[i & 1], (i >> 1) & 1, e);
      __syncwarp();
      if (e % 32 == 0) hopper::mbar_arrive(&dh_empty[i & 1]);  // the math may write buffer i & 1 again
    }
    return;
  }

  // The math warpgroups: each tile's main loop, then dh rounded to bf16 into buffer i & 1, once the epilogue has
  // read what it held two tiles ago.
  const int c = threadIdx.x / kWarpgroup, thread = threadIdx.x % kWarpgroup;
  float acc[1][kBN / 2];
  for (int i = 0, t = blockIdx.x; t < num_tiles; ++i, t += gridDim.x) {
    const uint32_t first = static_cast<uint32_t>(i) * k_tiles;
    hopper::issue_k_tiles<L, kStages, 1, kBN>(acc, smem, full, empty, first, k_tiles, c * kRows * hopper::kRowBytes,
                                            thread);
    hopper::finish_k_tiles<kStages, 1, kBN / 2>(acc, empty, first + k_tiles - 1, thread);
    uint32_t dh[kPairs];
#pragma unroll
    for (int q = 0; q < kPairs; ++q) dh[q] = hopper::pack_bf16x2(acc[0][2 * q], acc[0][2 * q + 1]);  // as cuBLAS
    if (i >= 2) hopper::mbar_wait(&dh_empty[i & 1], ((i >> 1) - 1) & 1);
    const uint32_t tile = dh_base + (i & 1) * kTileBytes;
#pragma unroll
    for (int j = 0; j < kPairs / 2; j += 2)
      hopper::stage_four<kPanelBytes>(tile, c * kRows, j, dh[2 * j], dh[2 * j + 1], dh[2 * j + 2], dh[2 * j + 3],
                                    thread);
    hopper::named_barrier_sync(1 + c, kWarpgroup);
    if (thread == 0) hopper::mbar_arrive(&dh_full[i & 1]);
  }
}

// The tensor maps of one call (dy and W_down^T); the last few calls' maps are remembered (04's SmallCache), so a
// training step called again with the same tensors encodes nothing.
struct Maps {
  CUtensorMap dy, wt;
};
struct Key {
  int device = 0;
  const void *dy = nullptr, *wt = nullptr;
  int64_t M = 0, dim = 0, hidden = 0;
  auto fields() const { return std::tie(device, dy, wt, M, dim, hidden); }
  bool operator==(const Key& o) const { return fields() == o.fields(); }
};

}  // namespace

void launch_dgated_gemm(const bf16* dy, const bf16* w_down_t, const bf16* g, const bf16* u, int64_t ld_gu, bf16* dg,
                        bf16* du, int64_t ld_dgu, bf16* h, int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream) {
  if (M == 0 || hidden == 0) return;
  static hopper::SmallCache<Key, Maps, 8> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const Maps maps = cache.get(Key{device, dy, w_down_t, M, dim, hidden}, [&] {
    return Maps{hopper::tile_map(dy, M, dim, dim, kBM, "dy", "dgated_gemm"), hopper::tile_map(w_down_t, hidden, dim, dim, kBN / 2, "W_down^T", "dgated_gemm")};
  });
  hopper::allow_smem<dgated_gemm_kernel>(kSmemBytes);
  const int64_t m_tiles = hopper::ceil_div(M, kBM), n_tiles = hopper::ceil_div(hidden, kBN), k_tiles = hopper::ceil_div(dim, kBK);
  const int grid = hopper::persistent_grid(m_tiles, n_tiles, k_tiles, "dgated_gemm");
  const Io io{g, u, dg, du, h, ld_gu, ld_dgu, M, hidden};
  dgated_gemm_kernel<<<grid, kThreads, kSmemBytes, stream>>>(maps.dy, maps.wt, io, static_cast<int>(m_tiles),
                                                            static_cast<int>(n_tiles), static_cast<int>(k_tiles));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch06
