// The epilogue mode's backward GEMM (Hopper, sm_90a only): dh = dy @ W_down, with the backward of h = gelu(g) * u in
// its epilogue, so dh never reaches memory. Chapter 04 wrote the forward's gated GEMM; this is its mirror, built from
// the same pieces (04_epilogue_mlp/pipeline.cuh: the ring of stages, the producer's TMA loads, one stage of wgmma).
//
// Here the epilogue is the larger half of the work. Per element of dh it reads g and u, writes dg, du and h (10 bytes)
// and runs the GELU and its derivative (one exp2 and one reciprocal for both: gelu_backward.cuh), where the main loop
// spends 2 * dim FLOPs on the tensor cores. (With tanhf for the derivative it took about 84 instructions a thread per
// element, as Nsight Compute counted them on an H100.) Those instructions need many warps to hide their latencies, so:
//  - A 128 x 128 tile of dh per block, computed by two consumer warpgroups (64 rows each, one wgmma m64n128k16 per
//    k-step), fed by one producer warp through a ring of three 32 KB stages: 97 KB of shared memory and at most 112
//    registers a thread, so two blocks share an SM (16 consumer warps), meant to let one block's wgmma run while the
//    other runs its epilogue. (They overlap less than that: beside an epilogue's memory traffic a main loop's three
//    stages in flight no longer cover its loads' latency; bench/results/2026-11-27_h100_dgated_timeline.)
//  - When the main loop is done, the ring is free, and it becomes the epilogue's staging area: the producer loads the
//    tile's g and u into it with TMA (64 KB: whole 128-byte lines, swizzled as 04's output tiles are), the consumers
//    read them from shared memory in the accumulator's own layout (conflict-free, thanks to the swizzle), write dg and
//    du over them and h into the third 32 KB, and one thread per warpgroup stores its 64 rows of the three with TMA.
//  - All of it a 64-column panel at a time: the consumers start on the first panel of g and u while the second is
//    still landing, and a panel of dg, du and h goes out while they work on the next. (One load and one store of the
//    whole tile: 151.9 us in 06's trace and 154.7 us in bench_train_mlp, against 149.0 us and 152.8 us then.)
//  - An L2 policy on every TMA copy: evict_last for dy and W_down^T, which many blocks read again, evict_first for g
//    and u coming in and dg, du and h going out, which pass through once, so the epilogues' 250 MB do not displace
//    the main loop's operands. In one bench_train_mlp call: 153.7 us without, 148.6 with the first alone, 143.6 with
//    all three (bench/results/2026-11-27_h100_dgated_l2_hints).
//  - Blocks walk the tiles in groups of kGroupM row blocks, all column blocks of a group before the next group (04's
//    tile_coords), so the blocks running at once share a few rows of dy and read g and u a few whole rows at a time.
//    Against row blocks fastest, in one bench_train_mlp call: 144.8 -> 138.4 us at the blog's shape, 320.1 -> 263.5
//    us at 16384 rows, 1691.6 -> 1503.7 us at dim 4096 (bench/results/2026-11-27_h100_dgated_tile_order).
//  - What did not help (kernel alone, blog's shape, H100): loading g into the first stage the main loop frees and u
//    into the next, under the last two k-tiles' wgmma, 172.8 us against 156.2 us in bench_train_mlp, the loads
//    competing with the main loop's; persistent designs, one block an SM, the epilogue on the math warps or on warps
//    of its own, 164-194 us against 154.7 us; tiles half as wide, three blocks an SM, 161.9 us
//    (bench/results/2026-11-26_h100_dgated_persistent).
// TMA also does the edges: g and u past the matrix load as zeros, and dg, du and h are clipped at its edges on the way
// out. The weight operand is W_down^T [hidden, dim], K-major like 04's weights: the op makes it with a transposing
// copy (dgated_gemm_op.cu).
//
// The numbers: dh is rounded to bf16 first, as cuBLAS stores it in the fused mode, then the one gelu_mul_backward
// arithmetic (gelu_backward.cuh), with gelu(g) computed once for dg, du and h (in its flush-to-zero form, the same
// bf16 on all 65536 inputs: 04's tests/gpu_arithmetic_test.cpp). Where this kernel's float32 sum rounds dh to the
// same bf16 as cuBLAS's, dg and du are the fused mode's bits; where the two sums round differently (their order
// differs), one dh differs by one step.
#include <cstring>
#include <tuple>

#include "04_epilogue_mlp/epilogue.cuh"
#include "04_epilogue_mlp/launch.h"
#include "04_epilogue_mlp/map_cache.h"
#include "04_epilogue_mlp/pipeline.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/gelu_backward.cuh"

namespace ch06 {
namespace {

using bf16 = __nv_bfloat16;
using ch04::kBK;
using ch04::kWarpgroup;

constexpr int kBM = 128, kBN = 128, kStages = 3, kChunks = 4;
constexpr int kGroupM = 4;                     // tiles run in groups of 4 row blocks (04's tile_coords)
constexpr int kRows = kBM / 2;                 // rows of the tile each consumer warpgroup computes
constexpr int kPairs = kBN / 4;                // bf16 pairs of dh each consumer thread has: 64 values
constexpr int kThreads = 2 * kWarpgroup + 32;  // two consumer warpgroups, one producer warp
using Smem = ch04::SmemLayout<kBM, kBN, kStages, 0>;  // the ring; its memory is reused by the epilogue
constexpr int kPanelBytes = kBM * 128;                // 128 rows x 64 columns of bf16
constexpr int kTileBytes = 2 * kPanelBytes;           // one 128 x 128 tile: g (then dg), u (then du), or h
static_assert(3 * kTileBytes <= Smem::kBarrierOffset, "g, u and h must fit in the ring they reuse");
static_assert(kPairs % kChunks == 0, "the chunks must split the pairs evenly");
static_assert(kChunks == 4 && kPairs == 32, "chunks 0 and 1 cover the first 64 columns, 2 and 3 the next 64");

// The tensor maps of one call: dy and W_down^T for the main loop, g and u loaded 128 rows by 64 columns (a panel) at a
// time, dg, du and h stored 64 rows (one warpgroup's) by 64 columns at a time.
struct Maps {
  CUtensorMap dy, wt, g, u, dg, du, h;
};

__device__ __forceinline__ uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
__device__ __forceinline__ void store_u32(uint8_t* p, uint32_t v) { memcpy(p, &v, 4); }
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

// Chunk kCh of the epilogue: pairs [kCh, kCh + 1) * kPairs / kChunks of this thread's accumulators. Pair q holds row
// 16 * warp + lane / 4 + 8 * (q % 2) of the warpgroup's 64, columns 8 * (q / 2) + 2 * (lane % 4) + {0, 1} (wgmma's
// accumulator layout, 04_epilogue_mlp/epilogue.cuh), at the same place in each of the three swizzled tiles. All of the
// chunk's loads come first, then all of its arithmetic, then its stores: a store may alias a later load as far as the
// compiler knows, so loads after stores would run one pair at a time, each waiting for the previous one's arithmetic.
template <int kCh>
__device__ __forceinline__ void epilogue_chunk(const float (&acc)[1][kBN / 2], uint8_t* tiles, int c, int thread) {
  constexpr int kN = kPairs / kChunks, kFirst = kCh * kN;
  const int warp = thread / 32, lane = thread % 32;
  uint32_t at[kN], g2[kN], u2[kN];
#pragma unroll
  for (int n = 0; n < kN; ++n) {
    const int q = kFirst + n, row = c * kRows + 16 * warp + lane / 4 + 8 * (q % 2);
    at[n] = ch04::staged_address<kPanelBytes>(0, row, q / 2) + 4 * (lane % 4);
    g2[n] = load_u32(tiles + at[n]);
    u2[n] = load_u32(tiles + kTileBytes + at[n]);
  }
  bf16 dg[kN][2], du[kN][2], h[kN][2];
#pragma unroll
  for (int n = 0; n < kN; ++n) {
    const int i = 2 * (kFirst + n);
    const uint32_t dh2 = ch04::pack_bf16x2(acc[0][i], acc[0][i + 1]);  // dh as cuBLAS stores it
    backward_one(ch04::bf16x2_lo(dh2), ch04::bf16x2_lo(g2[n]), ch04::bf16x2_lo(u2[n]), &dg[n][0], &du[n][0], &h[n][0]);
    backward_one(ch04::bf16x2_hi(dh2), ch04::bf16x2_hi(g2[n]), ch04::bf16x2_hi(u2[n]), &dg[n][1], &du[n][1], &h[n][1]);
  }
#pragma unroll
  for (int n = 0; n < kN; ++n) {  // dg and du over g and u: each thread overwrites only what it read itself
    store_u32(tiles + at[n], pack(dg[n][0], dg[n][1]));
    store_u32(tiles + kTileBytes + at[n], pack(du[n][0], du[n][1]));
    store_u32(tiles + 2 * kTileBytes + at[n], pack(h[n][0], h[n][1]));
  }
}

// After the two chunks of 64-column panel p: this warpgroup's writes made visible to the copy engine, then one thread
// stores its 64 rows of the panel of dg, du and h at (row0, col0 + 64 p), while the others go on to the next panel.
__device__ __forceinline__ void store_panel(const Maps& maps, uint8_t* tiles, int p, int c, int thread, int row0,
                                            int col0) {
  ch04::fence_view_async_shared();
  ch04::named_barrier_sync(1 + c, kWarpgroup);
  if (thread != 0) return;
  uint8_t* g = tiles + p * kPanelBytes + c * kRows * 128;
  const uint64_t once = ch04::l2_evict_first();  // written once here, read by later kernels: no reason to keep them
  ch04::tma_store_2d(&maps.dg, g, col0 + 64 * p, row0, once);
  ch04::tma_store_2d(&maps.du, g + kTileBytes, col0 + 64 * p, row0, once);
  ch04::tma_store_2d(&maps.h, g + 2 * kTileBytes, col0 + 64 * p, row0, once);
  ch04::bulk_commit_group();
}

__global__ void __launch_bounds__(kThreads, 2) dgated_gemm_kernel(const __grid_constant__ Maps maps, int k_tiles,
                                                                   int m_tiles, int n_tiles) {
  using L = Smem;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = ch04::align_1024(smem_raw);
  uint8_t* tiles = smem;  // g (dg), u (du), h: 32 KB each, where the ring was
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;
  uint64_t* gu_full = empty + kStages;  // [2]: panel p of g and of u has landed in the (former) ring
  if (threadIdx.x == 0) {
    ch04::init_ring<kStages>(full, empty, 2);  // both consumers read every stage
    ch04::mbar_init(&gu_full[0], 1);
    ch04::mbar_init(&gu_full[1], 1);
    ch04::fence_barrier_init();
  }
  __syncthreads();
  int mb, nb;
  ch04::tile_coords(blockIdx.x, m_tiles, n_tiles, kGroupM, mb, nb);
  const int m0 = mb * kBM;  // first row of dy and of dh
  const int n0 = nb * kBN;  // first hidden unit: row of W_down^T, column of dh

  if (threadIdx.x >= 2 * kWarpgroup) {  // the producer: one lane issues every TMA load
    if (threadIdx.x != 2 * kWarpgroup) return;
    const uint64_t keep = ch04::l2_evict_last(), once = ch04::l2_evict_first();
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kStages;
      if (kt >= kStages) ch04::mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);
      uint8_t* a = smem + s * L::kStageBytes;
      uint8_t* b = a + L::kABytes;
      ch04::mbar_arrive_expect_tx(&full[s], L::kStageBytes);
      ch04::tma_load_2d(a, &maps.dy, &full[s], kt * kBK, m0, keep);                             // dy[m0 : m0+128, k]
      ch04::tma_load_2d(b, &maps.wt, &full[s], kt * kBK, n0, keep);                             // W_down^T rows n0..
      ch04::tma_load_2d(b + L::kBHalfBytes, &maps.wt, &full[s], kt * kBK, n0 + kBN / 2, keep);  // ..n0 + kBN
    }
    // Once the consumers have released the last k-tiles (their wgmma are done with the ring), g and u move in.
    for (int kt = k_tiles > kStages ? k_tiles - kStages : 0; kt < k_tiles; ++kt)
      ch04::mbar_wait(&empty[kt % kStages], (kt / kStages) & 1);
    for (int p = 0; p < 2; ++p) {  // panel by panel: the epilogue of the first starts while the second lands
      ch04::mbar_arrive_expect_tx(&gu_full[p], 2 * kPanelBytes);
      ch04::tma_load_2d(tiles + p * kPanelBytes, &maps.g, &gu_full[p], n0 + 64 * p, m0, once);
      ch04::tma_load_2d(tiles + kTileBytes + p * kPanelBytes, &maps.u, &gu_full[p], n0 + 64 * p, m0, once);
    }
    return;
  }

  // The consumers: the main loop, then the epilogue in kChunks chunks, then the stores.
  const int c = threadIdx.x / kWarpgroup, thread = threadIdx.x % kWarpgroup;
  float acc[1][kBN / 2];
  ch04::issue_k_tiles<L, kStages, 1, kBN>(acc, smem, full, empty, 0, k_tiles, c * kRows * ch04::kRowBytes, thread);
  ch04::finish_k_tiles<kStages, 1, kBN / 2>(acc, empty, k_tiles - 1, thread);
  ch04::mbar_wait(&gu_full[0], 0);  // chunks 0 and 1: the first 64 columns
  epilogue_chunk<0>(acc, tiles, c, thread);
  epilogue_chunk<1>(acc, tiles, c, thread);
  store_panel(maps, tiles, 0, c, thread, m0 + c * kRows, n0);
  ch04::mbar_wait(&gu_full[1], 0);  // chunks 2 and 3: the next 64
  epilogue_chunk<2>(acc, tiles, c, thread);
  epilogue_chunk<3>(acc, tiles, c, thread);
  store_panel(maps, tiles, 1, c, thread, m0 + c * kRows, n0);
  if (thread == 0) ch04::bulk_wait_group_read<0>();  // the block's shared memory must outlive the copy engine's reads
}

// What a call's maps depend on; the last few calls' maps are remembered (04's SmallCache), so a training step called
// again with the same tensors encodes nothing.
struct Key {
  int device = 0;
  const void *dy = nullptr, *wt = nullptr, *g = nullptr, *u = nullptr, *dg = nullptr, *du = nullptr, *h = nullptr;
  int64_t M = 0, dim = 0, hidden = 0, ld_gu = 0, ld_dgu = 0;
  auto fields() const { return std::tie(device, dy, wt, g, u, dg, du, h, M, dim, hidden, ld_gu, ld_dgu); }
  bool operator==(const Key& o) const { return fields() == o.fields(); }
};

}  // namespace

void launch_dgated_gemm(const bf16* dy, const bf16* w_down_t, const bf16* g, const bf16* u, int64_t ld_gu, bf16* dg,
                        bf16* du, int64_t ld_dgu, bf16* h, int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream) {
  if (M == 0 || hidden == 0) return;
  static ch04::SmallCache<Key, Maps, 8> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const Maps maps = cache.get(Key{device, dy, w_down_t, g, u, dg, du, h, M, dim, hidden, ld_gu, ld_dgu}, [&] {
    using ch04::tile_map;
    return Maps{tile_map(dy, M, dim, dim, kBM, "dy"),
                tile_map(w_down_t, hidden, dim, dim, kBN / 2, "W_down^T"),
                tile_map(g, M, hidden, ld_gu, kBM, "g"),
                tile_map(u, M, hidden, ld_gu, kBM, "u"),
                tile_map(dg, M, hidden, ld_dgu, kRows, "dg"),
                tile_map(du, M, hidden, ld_dgu, kRows, "du"),
                tile_map(h, M, hidden, hidden, kRows, "h")};
  });
  ch04::allow_smem<dgated_gemm_kernel>(Smem::kBytes);
  const int m_tiles = static_cast<int>(ch04::ceil_div(M, kBM)), n_tiles = static_cast<int>(ch04::ceil_div(hidden, kBN));
  dgated_gemm_kernel<<<m_tiles * n_tiles, kThreads, Smem::kBytes, stream>>>(
      maps, static_cast<int>(ch04::ceil_div(dim, kBK)), m_tiles, n_tiles);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch06
