// The backward GEMM of dgated_gemm.cu with 128 x 256 tiles, for wide inputs (dim from kDgatedWideFromDim up: 1536,
// e.g. a 7B model's 4096). The diff against dgated_gemm.cu is the lesson: the same dh = dy @ W_down with the backward
// of h = gelu(g) * u in its epilogue, with the balance between the two halves of the work moved.
//  - Each k-step of the main loop is one wgmma m64n256k16 a math warpgroup (instead of m64n128k16): a 48 KB stage
//    feeds twice the multiply-adds of a 32 KB 128 x 128 one, and the tensor cores reach more of their peak. At dim
//    4096 the main loop is most of the kernel's time, so that is what counts there.
//  - The price: 128 accumulators a math thread need more than the 128 registers a thread that 512 threads leave
//    (ptxas allocates one count for the whole kernel), so the block is 384 threads and has three epilogue warps
//    instead of seven. And a 128 x 256 dh buffer (64 KB) beside three 48 KB ring stages leaves no room for g and u
//    slots: the epilogue warps load g and u themselves, eight vectors a thread in flight, as the kernel before TMA did.
//  - At the blog's shape (dim 768, twelve k-tiles) the epilogue is the larger half, and three warps are too few for it:
//    there dgated_gemm.cu's kernel is faster, and launch_dgated_gemm picks it (bench_train_mlp times both).
// The rest (persistent tiles in groups, the producer warp, L2 policies, the dh buffer's handover, the numbers) is as
// in dgated_gemm.cu.
#include <tuple>

#include "06_train_mlp/dgated_epilogue.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "hopper/launch.h"
#include "hopper/map_cache.h"
#include "hopper/pipeline.cuh"
#include "hopper/staging.cuh"

namespace ch06 {
namespace {

using bf16 = __nv_bfloat16;
using hopper::kBK;
using hopper::kWarpgroup;

constexpr int kBM = 128, kBN = 256, kStages = 3, kGroupM = 8;
constexpr int kRows = kBM / 2;              // rows of the tile each math warpgroup computes
constexpr int kThreads = 3 * kWarpgroup;    // two math warpgroups, then three epilogue warps and the producer's
constexpr int kEpilogueThreads = kWarpgroup - 32;
constexpr int kBatch = 8;                   // 16-byte vectors of g and u an epilogue thread has in flight
constexpr int kGroups = kBN / 8;            // 8-column groups of a row: a warp's 32 vectors are one whole row
constexpr int kVectors = kBM * kBN / 8;     // of a tile
constexpr int kBatches = (kVectors + kBatch * kEpilogueThreads - 1) / (kBatch * kEpilogueThreads);
constexpr int kRowStep = kEpilogueThreads / kGroups;  // rows between a thread's vectors
static_assert(kEpilogueThreads % kGroups == 0, "an epilogue thread keeps its column all tile long");
// The ring, then one dh buffer: 128 x 256, four 16 KB panels of 64 columns (two of the layout's output tiles).
using Smem = hopper::SmemLayout<kBM, kBN, kStages, 2>;
constexpr int kPanelBytes = kBM * 128;                  // 128 rows x 64 columns of bf16
constexpr int kSmemBytes = Smem::kBytes;
static_assert(kSmemBytes <= 227 * 1024, "more shared memory than an H100 block can have");

// Where the epilogue reads and writes, by plain pointers (row strides in elements).
struct Io {
  const bf16 *g, *u;
  bf16 *dg, *du, *h;
  int64_t ld_gu, ld_dgu, M, hidden;
};

using dgated::backward_vector;
using dgated::ld_shared_v4;

// The epilogue of tile (mb, nb), whose dh is in the dh buffer once dh_full completes phase `parity`: batch by batch,
// the thread's g and u vectors loaded, then dh read and dg, du, h written. Thread e takes column group e % kGroups (8
// columns, 16 bytes) of rows e / kGroups, e / kGroups + kRowStep, ...: a warp's 32 vectors are one whole 512-byte row,
// and, as in dgated_gemm.cu, only the row moves, so each vector costs a few adds of addresses.
__device__ __forceinline__ void epilogue_tile(const Io& io, int mb, int nb, uint32_t dh_tile, uint64_t* dh_full,
                                              uint32_t parity, int e) {
  const int group = e % kGroups, first_row = e / kGroups;
  const int64_t r0 = int64_t(mb) * kBM + first_row, c = int64_t(nb) * kBN + 8 * group;
  // How many of the tile's rows from first_row on lie inside the matrix; none where the column lies past hidden.
  const int rows_in = c < io.hidden ? static_cast<int>(min(io.M - r0, int64_t(kBM - first_row))) : 0;
  const bf16 *g = io.g + r0 * io.ld_gu + c, *u = io.u + r0 * io.ld_gu + c;
  bf16 *dg = io.dg + r0 * io.ld_dgu + c, *du = io.du + r0 * io.ld_dgu + c, *h_out = io.h + r0 * io.hidden + c;
#pragma unroll 1
  for (int b = 0; b < kBatches; ++b) {
    uint4 gv[kBatch], uv[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int k = (b * kBatch + j) * kRowStep;  // the row past first_row
      if (k < rows_in) {                          // streaming loads: read once
        gv[j] = __ldcs(reinterpret_cast<const uint4*>(g + k * io.ld_gu));
        uv[j] = __ldcs(reinterpret_cast<const uint4*>(u + k * io.ld_gu));
      }
    }
    if (b == 0) hopper::mbar_wait(dh_full, parity);  // the first batch's loads fly meanwhile
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int k = (b * kBatch + j) * kRowStep;
      if (k >= rows_in) break;
      uint4 h;
      const uint32_t at = hopper::staged_address<kPanelBytes>(dh_tile, first_row + k, group);
      backward_vector(ld_shared_v4(at), gv[j], uv[j], h);
      __stcs(reinterpret_cast<uint4*>(dg + k * io.ld_dgu), gv[j]);  // streaming stores: written once
      __stcs(reinterpret_cast<uint4*>(du + k * io.ld_dgu), uv[j]);
      __stcs(reinterpret_cast<uint4*>(h_out + k * io.hidden), h);
    }
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    dgated_gemm_wide_kernel(const __grid_constant__ CUtensorMap map_dy, const __grid_constant__ CUtensorMap map_w,
                            const Io io, int m_tiles, int n_tiles, int k_tiles) {
  using L = Smem;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = hopper::align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;
  uint64_t* dh_full = empty + kStages;  // the math warpgroups have written the dh buffer
  uint64_t* dh_empty = dh_full + 1;     // the epilogue warps have read it
  if (threadIdx.x == 0) {
    hopper::init_ring<kStages>(full, empty, 2);  // both math warpgroups read every stage
    hopper::mbar_init(dh_full, 2);
    hopper::mbar_init(dh_empty, kEpilogueThreads / 32);
    hopper::fence_barrier_init();
  }
  __syncthreads();
  const int num_tiles = m_tiles * n_tiles;
  const uint32_t dh_tile = hopper::smem_u32(smem + L::kOutOffset);

  if (threadIdx.x >= 2 * kWarpgroup) {
    if (threadIdx.x >= 2 * kWarpgroup + kEpilogueThreads) {  // the producer warp: one lane issues every TMA load
      if (threadIdx.x % 32 != 0) return;
      const uint64_t keep = hopper::l2_evict_last();  // dy and W_down are read again by many tiles
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
          for (int p = 0; p < kBN / 64; ++p)  // W_down rows kt * 64 .., 64 columns a panel (as dgated_gemm.cu)
            hopper::tma_load_2d(b + p * hopper::kMnPanelBytes, &map_w, &full[s], nb * kBN + 64 * p, kt * kBK, keep);
        }
      }
      return;
    }
    const int e = threadIdx.x - 2 * kWarpgroup;  // the epilogue warps
    for (int i = 0, t = blockIdx.x; t < num_tiles; ++i, t += gridDim.x) {
      int mb, nb;
      hopper::tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);
      epilogue_tile(io, mb, nb, dh_tile, dh_full, i & 1, e);
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
    for (int j = 0; j < kGroups; j += 2)  // as cuBLAS stores dh: rounded to bf16
      hopper::stage_four<kPanelBytes>(dh_tile, c * kRows, j, hopper::pack_bf16x2(acc[0][4 * j], acc[0][4 * j + 1]),
                                      hopper::pack_bf16x2(acc[0][4 * j + 2], acc[0][4 * j + 3]),
                                      hopper::pack_bf16x2(acc[0][4 * j + 4], acc[0][4 * j + 5]),
                                      hopper::pack_bf16x2(acc[0][4 * j + 6], acc[0][4 * j + 7]), thread);
    hopper::named_barrier_sync(1 + c, kWarpgroup);
    if (thread == 0) hopper::mbar_arrive(dh_full);
  }
}

// The tensor maps of one call (dy and W_down), remembered as dgated_gemm.cu's are.
struct Maps {
  CUtensorMap dy, w;
};
struct Key {
  int device = 0;
  const void *dy = nullptr, *w = nullptr;
  int64_t M = 0, dim = 0, hidden = 0;
  auto fields() const { return std::tie(device, dy, w, M, dim, hidden); }
  bool operator==(const Key& o) const { return fields() == o.fields(); }
};

}  // namespace

void launch_dgated_gemm_wide(const bf16* dy, const bf16* w_down, const bf16* g, const bf16* u, int64_t ld_gu,
                             bf16* dg, bf16* du, int64_t ld_dgu, bf16* h, int64_t M, int64_t dim, int64_t hidden,
                             cudaStream_t stream) {
  if (M == 0 || hidden == 0) return;
  static hopper::SmallCache<Key, Maps, 8> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const Maps maps = cache.get(Key{device, dy, w_down, M, dim, hidden}, [&] {
    const char* op = "dgated_gemm";
    return Maps{hopper::tile_map(dy, M, dim, dim, kBM, "dy", op),
                hopper::tile_map(w_down, dim, hidden, hidden, kBK, "W_down", op)};
  });
  hopper::allow_smem<dgated_gemm_wide_kernel>(kSmemBytes);
  const int64_t m_tiles = hopper::ceil_div(M, kBM), n_tiles = hopper::ceil_div(hidden, kBN);
  const int64_t k_tiles = hopper::ceil_div(dim, kBK);
  const int grid = hopper::persistent_grid(m_tiles, n_tiles, k_tiles, "dgated_gemm");
  const Io io{g, u, dg, du, h, ld_gu, ld_dgu, M, hidden};
  dgated_gemm_wide_kernel<<<grid, kThreads, kSmemBytes, stream>>>(maps.dy, maps.w, io, static_cast<int>(m_tiles),
                                                                 static_cast<int>(n_tiles), static_cast<int>(k_tiles));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch06
