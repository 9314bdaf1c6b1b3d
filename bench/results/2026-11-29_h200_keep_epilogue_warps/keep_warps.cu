// Experiment: the training forward with epilogue warps of its own (dgated_gemm.cu's plan, mirrored). The two math
// warpgroups only run the main loop and, at each tile's end, round g and u to bf16 into two staging tiles of their
// own (stmatrix) and store them by TMA; three epilogue warps (the producer warpgroup's other warps) read the staged g
// and u back and write h = gelu(g) * u with 16-byte stores, under the next tile's main loop. 3 ring stages (the two
// staging tiles a math warpgroup needs take the fourth's room).
#include "04_epilogue_mlp/epilogue.cuh"
#include "04_epilogue_mlp/launch.h"
#include "06_train_mlp/dgated_epilogue.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "hopper/launch.h"
#include "hopper/pipeline.cuh"
#include <cstdlib>

namespace ch06 {
namespace {

using bf16 = __nv_bfloat16;
using hopper::kWarpgroup;

constexpr int kBM = 128, kBN = 256, kStages = 3, kGroupM = 16;
constexpr int kRows = kBM / 2;   // rows of a tile each math warpgroup computes
constexpr int kCols = kBN / 2;   // h columns of a tile
constexpr int kThreads = 3 * kWarpgroup;
constexpr int kEpilogueThreads = kWarpgroup - 32;  // warps 1..3 of warpgroup 0
constexpr int kRowStep = kEpilogueThreads / 16;
constexpr int kPanelBytes = kRows * 128;  // 64 rows x 64 columns of bf16
using L = hopper::SmemLayout<kBM, kBN, kStages, 4, kRows>;  // out tiles: g0, u0, g1, u1
constexpr int kSmemBytes = L::kBytes + 8 * 8;
static_assert(kSmemBytes <= 227 * 1024, "shared memory");

struct Out {
  CUtensorMap g, u;
  bf16 *h, *gp, *up;
  int64_t M, hidden;
  int flags, group;  // experiment: 1 no h stores, 2 no g/u TMA stores, 4 g/u stored by the epilogue warps instead
};

template <bool kHeld>
__global__ void __launch_bounds__(kThreads, 1)
    geglu_gemm_keep_warps_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_gate,
                                 const __grid_constant__ CUtensorMap map_up, const __grid_constant__ Out out,
                                 int m_tiles, int n_tiles, int k_tiles) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = hopper::align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;
  uint64_t* staged_full = empty + kStages;   // [2]: math warpgroup c has staged its g and u
  uint64_t* staged_empty = staged_full + 2;  // [2]: the epilogue warps have read them
  if (threadIdx.x == 0) {
    hopper::init_ring<kStages>(full, empty, 2);
    for (int c = 0; c < 2; ++c) {
      hopper::mbar_init(&staged_full[c], 1);
      hopper::mbar_init(&staged_empty[c], kEpilogueThreads / 32);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();
  const int num_tiles = m_tiles * n_tiles;
  const int warpgroup = threadIdx.x / kWarpgroup;
  const auto g_tile = [&](int c) { return smem + L::kOutOffset + (2 * c) * L::kOutBytes; };
  const auto u_tile = [&](int c) { return smem + L::kOutOffset + (2 * c + 1) * L::kOutBytes; };

  if (warpgroup == 0) {
    if constexpr (kHeld) hopper::warpgroup_release_registers<56>();
    if (threadIdx.x < 32) {  // the producer warp
      if (threadIdx.x == 0)
      {
        if (out.group == 8)
          hopper::produce_tiles<L, kBM, kBN, kStages, 8>(smem, full, empty, &map_x, &map_gate, &map_up, &out.g, m_tiles, n_tiles, k_tiles);
        else if (out.group == 32)
          hopper::produce_tiles<L, kBM, kBN, kStages, 32>(smem, full, empty, &map_x, &map_gate, &map_up, &out.g, m_tiles, n_tiles, k_tiles);
        else if (out.group == 4)
          hopper::produce_tiles<L, kBM, kBN, kStages, 4>(smem, full, empty, &map_x, &map_gate, &map_up, &out.g, m_tiles, n_tiles, k_tiles);
        else
          hopper::produce_tiles<L, kBM, kBN, kStages, 16>(smem, full, empty, &map_x, &map_gate, &map_up, &out.g, m_tiles, n_tiles, k_tiles);
      }
      return;
    }
    const int e = threadIdx.x - 32, group = e % 16;
    for (int i = 0, t = blockIdx.x; t < num_tiles; ++i, t += gridDim.x) {
      int mb, nb;
      hopper::tile_coords(t, m_tiles, n_tiles, out.group, mb, nb);
      const int64_t col = int64_t(nb) * kCols + 8 * group;
      for (int c = 0; c < 2; ++c) {
        const int64_t r0 = int64_t(mb) * kBM + c * kRows;
        const int rows_in = col < out.hidden ? static_cast<int>(min(out.M - r0, int64_t(kRows))) : 0;
        hopper::mbar_wait(&staged_full[c], i & 1);
        const uint32_t g_base = hopper::smem_u32(g_tile(c)) + (group / 8) * kPanelBytes;
        const uint32_t u_base = hopper::smem_u32(u_tile(c)) + (group / 8) * kPanelBytes;
        int row = e / 16;
        bf16* h = out.h + (r0 + row) * out.hidden + col;
        bf16* gq = out.gp + (r0 + row) * out.hidden + col;
        bf16* uq = out.up + (r0 + row) * out.hidden + col;
#pragma unroll 1
        for (; row < kRows; row += kRowStep, h += kRowStep * out.hidden, gq += kRowStep * out.hidden, uq += kRowStep * out.hidden) {
          const uint32_t in_row = row * 128 + (((group % 8) ^ (row % 8)) << 4);
          const uint4 g = dgated::ld_shared_v4(g_base + in_row), u = dgated::ld_shared_v4(u_base + in_row);
          if ((out.flags & 4) && row < rows_in) {
            __stcs(reinterpret_cast<uint4*>(gq), g);
            __stcs(reinterpret_cast<uint4*>(uq), u);
          }
          uint4 v;
          v.x = ch04::gelu_times_up_bf16x2_fast(g.x, u.x);
          v.y = ch04::gelu_times_up_bf16x2_fast(g.y, u.y);
          v.z = ch04::gelu_times_up_bf16x2_fast(g.z, u.z);
          v.w = ch04::gelu_times_up_bf16x2_fast(g.w, u.w);
          if (row < rows_in && !(out.flags & 1)) __stcs(reinterpret_cast<uint4*>(h), v);
        }
        __syncwarp();
        if (e % 32 == 0) hopper::mbar_arrive(&staged_empty[c]);
      }
    }
    return;
  }

  if constexpr (kHeld) hopper::warpgroup_claim_registers<224>();
  const int c = warpgroup - 1, thread = threadIdx.x % kWarpgroup;
  uint8_t* gt = g_tile(c);
  uint8_t* ut = u_tile(c);
  float acc[1][kBN / 2];
  uint32_t held_g[32], held_u[32];
  bool holding = false;
  int staged = 0, held_row = 0, held_col = 0;
  // g and u into this warpgroup's staging tiles (pair k of each from pg(k), pu(k)), for the epilogue warps.
  const auto stage = [&](auto&& pg, auto&& pu, int row0, int col0) {
    if (staged >= 1) hopper::mbar_wait(&staged_empty[c], (staged - 1) & 1);
    if (thread == 0) hopper::bulk_wait_group_read<0>();
    hopper::named_barrier_sync(1 + c, kWarpgroup);
#pragma unroll
    for (int j = 0; j < 16; j += 2) {
      hopper::stage_four<kPanelBytes>(hopper::smem_u32(gt), 0, j, pg(2 * j), pg(2 * j + 1), pg(2 * j + 2),
                                      pg(2 * j + 3), thread);
      hopper::stage_four<kPanelBytes>(hopper::smem_u32(ut), 0, j, pu(2 * j), pu(2 * j + 1), pu(2 * j + 2),
                                      pu(2 * j + 3), thread);
    }
    hopper::fence_view_async_shared();
    hopper::named_barrier_sync(1 + c, kWarpgroup);
    if (thread == 0 && !(out.flags & 6)) {
      hopper::store_tile<kRows, kCols>(&out.g, gt, row0, col0);
      hopper::store_tile<kRows, kCols>(&out.u, ut, row0, col0);
    }
    if (thread == 0) hopper::mbar_arrive(&staged_full[c]);
    ++staged;
  };
  const auto from_held_g = [&](int k) { return held_g[k]; };
  const auto from_held_u = [&](int k) { return held_u[k]; };
  for (int i = 0, t = blockIdx.x; t < num_tiles; ++i, t += gridDim.x) {
    int mb, nb;
    hopper::tile_coords(t, m_tiles, n_tiles, out.group, mb, nb);
    const uint32_t first = static_cast<uint32_t>(i) * k_tiles;
    hopper::issue_k_tiles<L, kStages, 1, kBN>(acc, smem, full, empty, first, k_tiles, c * kRows * hopper::kRowBytes,
                                              thread, [&](int kt) {
                                                if constexpr (kHeld)
                                                  if (kt == 0 && holding)
                                                    stage(from_held_g, from_held_u, held_row, held_col);
                                              });
    hopper::finish_k_tiles<kStages, 1, kBN / 2>(acc, empty, first + k_tiles - 1, thread);
    const int row0 = mb * kBM + c * kRows, col0 = nb * kCols;
    if constexpr (kHeld) {
#pragma unroll
      for (int k = 0; k < 32; ++k) {
        held_g[k] = hopper::pack_bf16x2(acc[0][2 * k], acc[0][2 * k + 1]);
        held_u[k] = hopper::pack_bf16x2(acc[0][kBN / 4 + 2 * k], acc[0][kBN / 4 + 2 * k + 1]);
      }
      holding = true;
      held_row = row0;
      held_col = col0;
    } else {
      stage([&](int k) { return hopper::pack_bf16x2(acc[0][2 * k], acc[0][2 * k + 1]); },
            [&](int k) { return hopper::pack_bf16x2(acc[0][kBN / 4 + 2 * k], acc[0][kBN / 4 + 2 * k + 1]); }, row0,
            col0);
    }
  }
  if constexpr (kHeld)
    if (holding) stage(from_held_g, from_held_u, held_row, held_col);
  if (thread == 0) hopper::bulk_wait_group<0>();
}

}  // namespace

void launch_geglu_gemm_keep_warps(const bf16* x, const bf16* w_gate, const bf16* w_up, bf16* h, bf16* g, bf16* u,
                                  int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream) {
  if (!ch04::check_launch("fast", x, w_gate, w_up, h, M, dim, hidden, stream)) return;
  const int64_t m_tiles = hopper::ceil_div(M, kBM), n_tiles = hopper::ceil_div(hidden, kCols);
  const int64_t k_tiles = hopper::ceil_div(dim, hopper::kBK);
  const int grid = hopper::persistent_grid(m_tiles, n_tiles, k_tiles, "geglu_gemm");
  const ch04::TileMaps maps = ch04::tile_maps(x, w_gate, w_up, h, M, dim, hidden, kBM, kCols, kRows);
  const Out out{hopper::tile_map(g, M, hidden, hidden, kRows, "g", "geglu_gemm"),
                hopper::tile_map(u, M, hidden, hidden, kRows, "u", "geglu_gemm"), h, g, u, M, hidden,
                getenv("KEEP_FLAGS") ? atoi(getenv("KEEP_FLAGS")) : 0,
                getenv("KEEP_GROUP") ? atoi(getenv("KEEP_GROUP")) : 16};
  auto* kernel = (out.flags & 8) ? geglu_gemm_keep_warps_kernel<true> : geglu_gemm_keep_warps_kernel<false>;
  if (out.flags & 8)
    hopper::allow_smem<geglu_gemm_keep_warps_kernel<true>>(kSmemBytes);
  else
    hopper::allow_smem<geglu_gemm_keep_warps_kernel<false>>(kSmemBytes);
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(maps.x, maps.gate, maps.up, out, static_cast<int>(m_tiles),
                                                 static_cast<int>(n_tiles), static_cast<int>(k_tiles));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch06
