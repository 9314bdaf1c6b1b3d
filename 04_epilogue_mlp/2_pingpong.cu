// "pingpong": what 1_teach.cu adds up to once the grid is persistent and two consumers take turns. A persistent grid,
// one block per SM looping over 128 x 64 tiles; two consumer warpgroups take turns on the tensor cores, so one's
// epilogue runs during the other's main loop. The classic way to hide an epilogue, and it did not hide this one
// (H100, blog shape: ~141 us against ~173 for teach; TUNING.md says why).
//
// Grid = one block per SM (at most), each looping over tiles in the order tile = blockIdx.x + i * gridDim.x. Block = 3
// warpgroups. Warpgroup 0 is the producer: it gives registers back (setmaxnreg.dec) and one thread issues every TMA
// load (produce_tiles, pipeline.cuh). Warpgroups 1 and 2 are consumers (setmaxnreg.inc: 128 accumulator floats each).
//
// One ring of kStages stages serves both consumers. The producer fills it in tile order, k-tile after k-tile, so the
// k-tiles of the block's i-th tile sit at ring positions i * k_tiles ... i * k_tiles + k_tiles - 1 (stage = position %
// kStages, phase = position / kStages). Each consumer computes its positions from i; no state is passed around.
//
// Tiles of 128 rows (two m64n128 wgmma per k-step, 64 gate + 64 up columns), and the block's tiles alternate between
// the consumers (consumer 0 takes even i, consumer 1 odd i). Turns: consumer c starts the main loop of tile i only
// after the other consumer has issued all the wgmma of tile i - 1 (barrier turn[1 - c]). Two reasons: (1) the tensor
// cores then work on one tile at a time while the other consumer runs its epilogue on the other units; that overlap is
// the point of the design; (2) ring positions are then waited for in order, so no waiter can be two phases behind a
// barrier (parity waits cannot tell phase p from p + 2). Each consumer stages its outputs in its own buffer, so the
// epilogues never wait for each other.
#include "04_epilogue_mlp/epilogue.cuh"
#include "04_epilogue_mlp/launch.h"
#include "hopper/pipeline.cuh"

namespace ch04 {
namespace {

constexpr int kBM = 128, kBN = 128, kStages = 6, kGroupM = 16;
constexpr int kRows = kBM;            // rows of x (and m) one consumer computes per tile: all of them
constexpr int kMBlocks = kRows / 64;  // wgmma per k-step: one per 64-row block
using L = SmemLayout<kBM, kBN, kStages, 2, kRows>;
constexpr int kThreads = 3 * kWarpgroup;                // producer warpgroup + two consumer warpgroups
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128 x 40 + 256 x 232 = 64512 <= 65536 registers per SM
static_assert(kWarpgroup * kProducerRegs + 2 * kWarpgroup * kConsumerRegs <= 65536, "register file");

__global__ void __launch_bounds__(kThreads, 1)
    geglu_gemm_pingpong_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_gate,
                               const __grid_constant__ CUtensorMap map_up, const __grid_constant__ CUtensorMap map_m,
                               int m_tiles, int n_tiles, int k_tiles) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;
  uint64_t* turn = empty + kStages;  // turn[c] completes a phase each time consumer c has issued a tile's wgmma

  if (threadIdx.x == 0) {
    init_ring<kStages>(full, empty, 1);  // each stage is read by one consumer
    mbar_init(&turn[0], 1);
    mbar_init(&turn[1], 1);
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
  const uint32_t a_offset = 0;                              // every row of the x tile
  float acc[kMBlocks][kBN / 2];

  for (int i = c;; i += 2) {  // consumer c takes the block's tiles i = c, c + 2, ...
    const int t = blockIdx.x + i * gridDim.x;
    if (t >= num_tiles) break;
    int mb, nb;
    tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);

    // Our turn on the tensor cores once the other consumer has issued all of tile i - 1 (its ((i - 1) / 2)-th tile).
    if (i > 0) mbar_wait(&turn[1 - c], ((i - 1) / 2) & 1);

    // Main loop (pipeline.cuh): two stages' wgmma in flight.
    const uint32_t first = static_cast<uint32_t>(i) * k_tiles;
    issue_k_tiles<L, kStages, kMBlocks, kBN>(acc, smem, full, empty, first, k_tiles, a_offset, thread);
    if (thread == 0) mbar_arrive(&turn[c]);  // all our wgmma issued: the other consumer may start its tile
    finish_k_tiles<kStages>(acc, empty, first + k_tiles - 1, thread);

    // Epilogue, while the other consumer's tile runs on the tensor cores.
    uint32_t out[kMBlocks][kBN / 8];
    gate_times_up<kMBlocks, kBN>(acc, out);
    if (thread == 0) bulk_wait_group_read<0>();  // our previous tile's store has finished reading the staging tile
    named_barrier_sync(1 + c, kWarpgroup);
    stage_outputs<kMBlocks, kBN>(out, smem_u32(tile), thread);
    fence_view_async_shared();
    named_barrier_sync(1 + c, kWarpgroup);
    if (thread == 0) store_tile<kRows, kBN / 2>(&map_m, tile, mb * kBM, nb * (kBN / 2));
  }
  if (thread == 0) bulk_wait_group<0>();
}

}  // namespace

void launch_pingpong(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                     int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream) {
  if (!check_launch("pingpong", x, w_gate, w_up, m, M, dim, hidden, stream)) return;
  const int64_t m_tiles = ceil_div(M, kBM), n_tiles = ceil_div(hidden, kBN / 2), k_tiles = ceil_div(dim, kBK);
  const int grid = persistent_grid(m_tiles, n_tiles, k_tiles, "geglu_gemm");
  const TileMaps maps = tile_maps(x, w_gate, w_up, m, M, dim, hidden, kBM, kBN / 2, kRows);
  allow_smem<geglu_gemm_pingpong_kernel>(L::kBytes);
  geglu_gemm_pingpong_kernel<<<grid, kThreads, L::kBytes, stream>>>(
      maps.x, maps.gate, maps.up, maps.m, static_cast<int>(m_tiles), static_cast<int>(n_tiles),
      static_cast<int>(k_tiles));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch04
