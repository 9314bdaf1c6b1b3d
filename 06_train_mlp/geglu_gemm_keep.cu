// The epilogue mode's forward (Hopper, sm_90a only): h = gelu(x @ W_gate^T) * (x @ W_up^T) with chapter 04's bits,
// and g = x @ W_gate^T, u = x @ W_up^T rounded to bf16 (as eager's two GEMMs store them) for the backward, from one
// kernel. It is built like the backward's kernel (dgated_gemm.cu) with the roles swapped: there the epilogue warps
// read g and u and write dg, du and h; here the math makes g and u, and the epilogue warps write them and h.
//  - Persistent: one block an SM walks 128 x 96 tiles of h in groups of kGroupM row blocks (hopper's tile_coords).
//    Two math warpgroups compute a tile (64 rows each, one wgmma m64n192k16 per k-step against the stacked [gate; up]
//    weight tile, so a thread holds g and u of the same columns: 04's epilogue.cuh, "THE PAIRING"), fed through a
//    ring of four 40 KB stages by one producer thread (pipeline.cuh).
//  - When a tile's main loop is done, each math warpgroup rounds its g and u to bf16 into two staging tiles of its
//    own (stmatrix, the swizzled layout) and goes on with the next tile. No GELU runs in the warps that issue wgmma.
//  - Three epilogue warps (the producer's warpgroup has four warps; the producer needs one thread) read each 16-byte
//    vector of the staged g and u once, write both out, and write h = gelu(g) * u beside them, with 16-byte
//    streaming stores, under the next tile's main loop.
//  - Shared memory: ring 160 KB + four 16 KB staging tiles = 224 KB. Why 96 columns and not 04's 128: with 128, the
//    staging tiles leave room for three 48 KB stages only, and three do not cover the loads' latency; four do.
// The same bits as 04's `fast` kernel, and faster in 06's step: bench/results/geglu_gemm_keep.md.
#include <climits>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "04_epilogue_mlp/kernels.cuh"  // geglu_gemm's argument rules
#include "06_train_mlp/dgated_epilogue.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "base/error.h"
#include "gpu/gelu.cuh"
#include "hopper/launch.h"
#include "hopper/map_cache.h"
#include "hopper/pipeline.cuh"
#include "hopper/staging.cuh"

namespace ch06 {
namespace {

using bf16 = __nv_bfloat16;
using hopper::kWarpgroup;

constexpr int kBM = 128, kBN = 192, kStages = 4, kGroupM = 16;
constexpr int kRows = kBM / 2;                     // rows of the tile each math warpgroup computes
constexpr int kCols = kBN / 2;                     // columns of h (and of g, and of u) in a tile
constexpr int kThreads = 3 * kWarpgroup;           // the producer's warpgroup, then the two math warpgroups
constexpr int kEpilogueThreads = kWarpgroup - 32;  // warps 1 to 3
constexpr int kVectors = kCols / 8;                // 16-byte vectors in a row of the tile
constexpr int kRowStep = kEpilogueThreads / kVectors;
constexpr int kPanelBytes = kRows * 128;        // a staging tile is two panels of 64 rows x 64 columns (the second
constexpr int kStagingBytes = 2 * kPanelBytes;  // half used: 96 columns)
// The ring, then the staging tiles (g of math warpgroup 0, its u, g of warpgroup 1, its u), then the barriers.
using Ring = hopper::SmemLayout<kBM, kBN, kStages, 0>;
constexpr int kStagingOffset = Ring::kOutOffset;
constexpr int kBarrierOffset = kStagingOffset + 4 * kStagingBytes;
constexpr int kSmemBytes = kBarrierOffset + (2 * kStages + 4) * 8 + 1024;  // 1 KB for the alignment of the base
static_assert(kSmemBytes <= 227 * 1024, "more shared memory than an H100 block can have");

struct Out {
  bf16 *h, *g, *u;  // [M, hidden] each
  int64_t M, hidden;
};

// Two elements of h from the bf16 pairs of g and u: 04's `fast` arithmetic (epilogue.cuh,
// gelu_times_up_bf16x2_fast), so h has geglu_gemm's bits.
__device__ __forceinline__ uint32_t gelu_times_up(uint32_t g, uint32_t u) {
  using namespace hopper;
  return mul_bf16x2(pack_bf16x2(ladder::gelu_tanh_f32_ftz(bf16x2_lo(g)), ladder::gelu_tanh_f32_ftz(bf16x2_hi(g))), u);
}

// The epilogue of math warpgroup c's half of tile (mb, nb), from its staging tiles. Thread e takes column group
// e % 12 (8 columns, 16 bytes) of rows e / 12, e / 12 + kRowStep, ...: column groups 2k and 2k + 1 (one 32-byte
// sector) are stored by neighbouring threads of one warp, so when hidden is a multiple of 16 (the blog's shape) every
// store covers whole sectors.
__device__ __forceinline__ void epilogue_half(const Out& out, int mb, int nb, int c, uint32_t g_tile, uint32_t u_tile,
                                              int e) {
  const int group = e % kVectors;
  const int64_t r0 = int64_t(mb) * kBM + c * kRows, col = int64_t(nb) * kCols + 8 * group;
  // The half's rows inside the matrix; none where this thread's column lies past hidden. Stores stop there.
  const int rows_in = col < out.hidden ? static_cast<int>(min(out.M - r0, int64_t(kRows))) : 0;
  int row = e / kVectors;
  const int64_t at = (r0 + row) * out.hidden + col, step = kRowStep * out.hidden;
  bf16 *h = out.h + at, *g = out.g + at, *u = out.u + at;
  const uint32_t panel = (group / 8) * kPanelBytes;
#pragma unroll 1
  for (; row < rows_in; row += kRowStep, h += step, g += step, u += step) {
    const uint32_t in_row = panel + row * 128 + (((group % 8) ^ (row % 8)) << 4);  // the 128-byte swizzle
    const uint4 gv = dgated::ld_shared_v4(g_tile + in_row), uv = dgated::ld_shared_v4(u_tile + in_row);
    const uint4 hv{gelu_times_up(gv.x, uv.x), gelu_times_up(gv.y, uv.y), gelu_times_up(gv.z, uv.z),
                   gelu_times_up(gv.w, uv.w)};
    __stcs(reinterpret_cast<uint4*>(g), gv);  // streaming stores: written once, read by the backward
    __stcs(reinterpret_cast<uint4*>(u), uv);
    __stcs(reinterpret_cast<uint4*>(h), hv);
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    geglu_gemm_keep_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_gate,
                           const __grid_constant__ CUtensorMap map_up, const Out out, int m_tiles, int n_tiles,
                           int k_tiles) {
  using L = Ring;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = hopper::align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kBarrierOffset);
  uint64_t* empty = full + kStages;
  uint64_t* staged_full = empty + kStages;   // [2]: math warpgroup c has staged its g and u
  uint64_t* staged_empty = staged_full + 2;  // [2]: the epilogue warps have read them
  if (threadIdx.x == 0) {
    hopper::init_ring<kStages>(full, empty, 2);  // both math warpgroups read every stage
    for (int c = 0; c < 2; ++c) {
      hopper::mbar_init(&staged_full[c], 1);
      hopper::mbar_init(&staged_empty[c], kEpilogueThreads / 32);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();
  const int num_tiles = m_tiles * n_tiles;
  const auto staging = [&](int c, int which) {  // which: 0 g, 1 u
    return hopper::smem_u32(smem + kStagingOffset + (2 * c + which) * kStagingBytes);
  };

  if (threadIdx.x < 32) {  // the producer warp: one thread brings x and the stacked weight tile into the ring
    if (threadIdx.x == 0)  // (its last map is the output's, for a prefetch: here the outputs go out by address)
      hopper::produce_tiles<L, kBM, kBN, kStages, kGroupM>(smem, full, empty, &map_x, &map_gate, &map_up, &map_x,
                                                           m_tiles, n_tiles, k_tiles);
    return;
  }

  if (threadIdx.x < kWarpgroup) {  // the epilogue warps: each tile's two halves, as the math warpgroups stage them
    const int e = threadIdx.x - 32;
    for (int i = 0, t = blockIdx.x; t < num_tiles; ++i, t += gridDim.x) {
      int mb, nb;
      hopper::tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);
      for (int c = 0; c < 2; ++c) {
        hopper::mbar_wait(&staged_full[c], i & 1);
        epilogue_half(out, mb, nb, c, staging(c, 0), staging(c, 1), e);
        __syncwarp();
        if (e % 32 == 0) hopper::mbar_arrive(&staged_empty[c]);  // the math may stage again
      }
    }
    return;
  }

  // The math warpgroups: each tile's main loop, then g and u rounded to bf16 into this warpgroup's staging tiles,
  // once the epilogue warps have read what they held a tile ago (they have had this tile's whole main loop to do so).
  const int c = threadIdx.x / kWarpgroup - 1, thread = threadIdx.x % kWarpgroup;
  float acc[1][kBN / 2];  // columns 0..95: g, 96..191: u (the stacked weight tile's halves)
  for (int i = 0, t = blockIdx.x; t < num_tiles; ++i, t += gridDim.x) {
    int mb, nb;
    hopper::tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);
    const uint32_t first = static_cast<uint32_t>(i) * k_tiles;
    hopper::issue_k_tiles<L, kStages, 1, kBN>(acc, smem, full, empty, first, k_tiles, c * kRows * hopper::kRowBytes,
                                              thread);
    hopper::finish_k_tiles<kStages, 1, kBN / 2>(acc, empty, first + k_tiles - 1, thread);
    if (i >= 1) hopper::mbar_wait(&staged_empty[c], (i - 1) & 1);
#pragma unroll
    for (int j = 0; j < kCols / 8; j += 2) {  // bf16 pairs 2j .. 2j + 3 of g, and of u
      const float* g = &acc[0][4 * j];
      const float* u = &acc[0][kBN / 4 + 4 * j];
      hopper::stage_four<kPanelBytes>(staging(c, 0), 0, j, hopper::pack_bf16x2(g[0], g[1]),
                                      hopper::pack_bf16x2(g[2], g[3]), hopper::pack_bf16x2(g[4], g[5]),
                                      hopper::pack_bf16x2(g[6], g[7]), thread);
      hopper::stage_four<kPanelBytes>(staging(c, 1), 0, j, hopper::pack_bf16x2(u[0], u[1]),
                                      hopper::pack_bf16x2(u[2], u[3]), hopper::pack_bf16x2(u[4], u[5]),
                                      hopper::pack_bf16x2(u[6], u[7]), thread);
    }
    hopper::named_barrier_sync(1 + c, kWarpgroup);
    if (thread == 0) hopper::mbar_arrive(&staged_full[c]);
  }
}

[[noreturn]] void fail(const std::string& what) { throw ladder::Error("geglu_gemm_keep: " + what); }

// The tensor maps of one call (x and the two weights); the last few calls' maps are remembered (hopper/map_cache.h),
// so a training step called again with the same tensors encodes nothing.
struct Maps {
  CUtensorMap x, gate, up;
};
struct Key {
  int device = 0;
  const void *x = nullptr, *gate = nullptr, *up = nullptr;
  int64_t M = 0, dim = 0, hidden = 0;
  auto fields() const { return std::tie(device, x, gate, up, M, dim, hidden); }
  bool operator==(const Key& o) const { return fields() == o.fields(); }
};

}  // namespace

void launch_geglu_gemm_keep(const bf16* x, const bf16* w_gate, const bf16* w_up, bf16* h, bf16* g, bf16* u, int64_t M,
                            int64_t dim, int64_t hidden, cudaStream_t stream) {
  // geglu_gemm's rules (04's kernels.cuh), for each of the three outputs.
  if (M < 0 || dim < 0 || hidden < 0) fail("sizes must be >= 0");
  if (const std::string rule = ch04::geglu_gemm_shape_rule(dim, hidden); !rule.empty()) fail(rule);
  if (M > INT_MAX || dim > INT_MAX || hidden > INT_MAX) fail("sizes must be < 2^31 (TMA's coordinates are 32-bit)");
  if (M == 0 || hidden == 0) return;
  for (const auto& [p, name] :
       {std::pair<const void*, const char*>{x, "x"}, {w_gate, "w_gate"}, {w_up, "w_up"}, {h, "h"}, {g, "g"}, {u, "u"}})
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0)
      fail(std::string(name) + " is not 16-byte aligned: the kernel copies 16 bytes at a time from 16-byte boundaries");
  // A GEMM reads its inputs again and again while it writes: no output may share a byte with an input or another
  // output.
  struct Arg {
    uintptr_t at;
    uint64_t bytes;
    const char* name;
  };
  const auto arg = [](const void* p, uint64_t rows, uint64_t cols, const char* name) {
    return Arg{reinterpret_cast<uintptr_t>(p), rows * cols * sizeof(bf16), name};
  };
  const Arg args[] = {arg(h, M, hidden, "h"),
                      arg(g, M, hidden, "g"),
                      arg(u, M, hidden, "u"),
                      arg(x, M, dim, "x"),
                      arg(w_gate, hidden, dim, "w_gate"),
                      arg(w_up, hidden, dim, "w_up")};
  for (int out = 0; out < 3; ++out)
    for (int other = out + 1; other < 6; ++other)
      if (const Arg& a = args[out], &b = args[other]; b.bytes > 0 && a.at < b.at + b.bytes && b.at < a.at + a.bytes)
        fail(std::string(a.name) + " overlaps " + b.name + ": a GEMM reads its inputs while it writes, so h, g and u " +
             "must share no byte with each other or an input");
  const size_t bytes = static_cast<size_t>(M) * hidden * sizeof(bf16);
  if (dim == 0) {  // g = u = 0, and h = gelu(0) * 0 = 0
    for (bf16* out : {h, g, u}) CUDA_CHECK(cudaMemsetAsync(out, 0, bytes, stream));
    return;
  }
  const int64_t m_tiles = hopper::ceil_div(M, kBM), n_tiles = hopper::ceil_div(hidden, kCols);
  const int64_t k_tiles = hopper::ceil_div(dim, hopper::kBK);
  const int grid = hopper::persistent_grid(m_tiles, n_tiles, k_tiles, "geglu_gemm_keep");
  static hopper::SmallCache<Key, Maps, 8> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const Maps maps = cache.get(Key{device, x, w_gate, w_up, M, dim, hidden}, [&] {
    const char* op = "geglu_gemm_keep";  // x in boxes of kBM rows, each weight in boxes of kCols: the stacked tile
    return Maps{hopper::tile_map(x, M, dim, dim, kBM, "x", op),
                hopper::tile_map(w_gate, hidden, dim, dim, kCols, "w_gate", op),
                hopper::tile_map(w_up, hidden, dim, dim, kCols, "w_up", op)};
  });
  hopper::allow_smem<geglu_gemm_keep_kernel>(kSmemBytes);
  geglu_gemm_keep_kernel<<<grid, kThreads, kSmemBytes, stream>>>(maps.x, maps.gate, maps.up, Out{h, g, u, M, hidden},
                                                                 static_cast<int>(m_tiles), static_cast<int>(n_tiles),
                                                                 static_cast<int>(k_tiles));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch06
