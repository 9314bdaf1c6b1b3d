// "coop": pingpong (2_pingpong.cu) with both consumer warpgroups on ONE 128 x 128 tile of m: each computes its 64 of
// the 128 rows with one m64n256 wgmma per k-step (128 gate + 128 up columns) against the same 256-row stacked weight
// tile. Twice the math per byte brought into shared memory, so the main loop alone runs faster than cuBLAS (~106 us
// with the epilogue stripped, an experiment); the epilogue runs with the tensor cores idle. (H100, blog shape:
// ~123-131 us; TUNING.md.)
//
// Grid, block, producer and ring as in pingpong. Each stage is now read by both consumers, so a stage is released
// after two arrivals, and there are no turns: both work on every tile of the block, i = 0, 1, 2, ... Each consumer
// stages its 64 rows of outputs in its own buffer, so the epilogues never wait for each other.
#include "04_epilogue_mlp/epilogue.cuh"
#include "04_epilogue_mlp/launch.h"
#include "hopper/pipeline.cuh"

namespace ch04 {
namespace {

constexpr int kBM = 128, kBN = 256, kStages = 4, kGroupM = 16;
constexpr int kRows = kBM / 2;        // rows of x (and m) one consumer computes per tile: its half
constexpr int kMBlocks = kRows / 64;  // wgmma per k-step: one per 64-row block
using L = SmemLayout<kBM, kBN, kStages, 2, kRows>;
constexpr int kThreads = 3 * kWarpgroup;                // producer warpgroup + two consumer warpgroups
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128 x 40 + 256 x 232 = 64512 <= 65536 registers per SM
static_assert(kWarpgroup * kProducerRegs + 2 * kWarpgroup * kConsumerRegs <= 65536, "register file");

__global__ void __launch_bounds__(kThreads, 1)
    geglu_gemm_coop_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_gate,
                           const __grid_constant__ CUtensorMap map_up, const __grid_constant__ CUtensorMap map_m,
                           int m_tiles, int n_tiles, int k_tiles) {
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

  for (int i = 0;; ++i) {  // both consumers take every tile of the block
    const int t = blockIdx.x + i * gridDim.x;
    if (t >= num_tiles) break;
    int mb, nb;
    tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);

    // Main loop (pipeline.cuh): two stages' wgmma in flight.
    const uint32_t first = static_cast<uint32_t>(i) * k_tiles;
    issue_k_tiles<L, kStages, kMBlocks, kBN>(acc, smem, full, empty, first, k_tiles, a_offset, thread);
    finish_k_tiles<kStages>(acc, empty, first + k_tiles - 1, thread);

    // Epilogue: both consumers at once, the tensor cores idle.
    uint32_t out[kMBlocks][kBN / 8];
    gate_times_up<kMBlocks, kBN>(acc, out);
    if (thread == 0) bulk_wait_group_read<0>();  // our previous tile's store has finished reading the staging tile
    named_barrier_sync(1 + c, kWarpgroup);
    stage_outputs<kMBlocks, kBN>(out, smem_u32(tile), thread);
    fence_view_async_shared();
    named_barrier_sync(1 + c, kWarpgroup);
    if (thread == 0) store_tile<kRows, kBN / 2>(&map_m, tile, mb * kBM + c * kRows, nb * (kBN / 2));
  }
  if (thread == 0) bulk_wait_group<0>();
}

}  // namespace

void launch_coop(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                 int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream) {
  if (!check_launch("coop", x, w_gate, w_up, m, M, dim, hidden, stream)) return;
  const int64_t m_tiles = ceil_div(M, kBM), n_tiles = ceil_div(hidden, kBN / 2), k_tiles = ceil_div(dim, kBK);
  const int grid = persistent_grid(m_tiles, n_tiles, k_tiles, "geglu_gemm");
  const TileMaps maps = tile_maps(x, w_gate, w_up, m, M, dim, hidden, kBM, kBN / 2, kRows);
  allow_smem<geglu_gemm_coop_kernel>(L::kBytes);
  geglu_gemm_coop_kernel<<<grid, kThreads, L::kBytes, stream>>>(maps.x, maps.gate, maps.up, maps.m,
                                                                static_cast<int>(m_tiles), static_cast<int>(n_tiles),
                                                                static_cast<int>(k_tiles));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch04
