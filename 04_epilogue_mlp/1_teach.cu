// "teach": chapter 04's gated GEMM at its simplest. Read it first: one 64 x 128 tile of m per block, one consumer
// warpgroup, one producer warp, top to bottom. (H100, blog shape: ~173 us, TUNING.md.)
//
// Block = 5 warps: warps 0-3 are the consumer warpgroup (wgmma needs 4 consecutive warps starting at a multiple of
// 4), warp 4 the producer, of which one lane issues all TMA loads. Per stage: 64 rows of x (8 KB) and 128 gate + 128
// up weight rows (32 KB); one wgmma m64n256k16 per k-step of 16 gives every thread 64 g and 64 u values. No setmaxnreg:
// with 160 threads per block every thread can have 255 registers anyway. While the consumer runs the epilogue the
// block's tensor cores idle, and nothing else runs on the SM: what the next files fix.
#include "04_epilogue_mlp/epilogue.cuh"
#include "04_epilogue_mlp/launch.h"
#include "hopper/pipeline.cuh"

namespace ch04 {
namespace {

constexpr int kTeachBM = 64, kTeachBN = 256, kTeachStages = 4, kTeachThreads = kWarpgroup + 32;
using TeachSmem = SmemLayout<kTeachBM, kTeachBN, kTeachStages, 1>;

__global__ void __launch_bounds__(kTeachThreads, 1)
    geglu_gemm_teach_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_gate,
                            const __grid_constant__ CUtensorMap map_up, const __grid_constant__ CUtensorMap map_m,
                            int k_tiles) {
  constexpr int kStages = kTeachStages;
  using L = TeachSmem;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);  // stage s has landed
  uint64_t* empty = full + kStages;                                        // stage s has been read

  if (threadIdx.x == 0) {
    init_ring<kStages>(full, empty, 1);  // one consumer thread releases each stage
    fence_barrier_init();
  }
  __syncthreads();

  const int m0 = blockIdx.x * kTeachBM;        // first row of x and of m
  const int n0 = blockIdx.y * (kTeachBN / 2);  // first hidden unit (row of W_gate and W_up, column of m)

  if (threadIdx.x >= kWarpgroup) {
    // Producer: fill stage kt % kStages with k-tile kt, once the consumer has released what it held before.
    if (threadIdx.x == kWarpgroup) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);  // release of k-tile kt - kStages
        uint8_t* a = smem + s * L::kStageBytes;
        uint8_t* b = a + L::kABytes;
        mbar_arrive_expect_tx(&full[s], L::kStageBytes);
        tma_load_2d(a, &map_x, &full[s], kt * kBK, m0);                    // x[m0 : m0+64, k]
        tma_load_2d(b, &map_gate, &full[s], kt * kBK, n0);                 // W_gate[n0 : n0+128, k]
        tma_load_2d(b + L::kBHalfBytes, &map_up, &full[s], kt * kBK, n0);  // W_up[n0 : n0+128, k], stacked below
      }
    }
    return;
  }

  // Consumer: the main loop.
  float acc[1][kTeachBN / 2];
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % kStages;
    mbar_wait(&full[s], (kt / kStages) & 1);
    const uint32_t a = smem_u32(smem + s * L::kStageBytes);
    wgmma_fence();
    mma_stage<1, kTeachBN>(acc, a, a + L::kABytes, kt > 0);
    wgmma_commit_group();
    wgmma_wait_group<0>();  // simplest form: finish this stage's math before releasing it (the others keep two)
    pin_accumulators(acc);
    if (threadIdx.x == 0) mbar_arrive(&empty[s]);
  }

  // Epilogue: pair g with u in registers, stage through shared memory, one TMA store per 64-column panel.
  uint32_t out[1][kTeachBN / 8];
  gate_times_up<1, kTeachBN>(acc, out);
  uint8_t* tile = smem + L::kOutOffset;
  stage_outputs<1, kTeachBN>(out, smem_u32(tile), threadIdx.x);
  fence_view_async_shared();
  named_barrier_sync(1, kWarpgroup);
  if (threadIdx.x == 0) {
    store_tile<kTeachBM, kTeachBN / 2>(&map_m, tile, m0, n0);
    bulk_wait_group<0>();  // shared memory must outlive the store's reads
  }
}

}  // namespace

void launch_teach(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                  int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream) {
  if (!check_launch("teach", x, w_gate, w_up, m, M, dim, hidden, stream)) return;
  const int64_t m_tiles = ceil_div(M, kTeachBM), n_tiles = ceil_div(hidden, kTeachBN / 2);
  if (n_tiles > 65535) fail("teach: hidden too large for grid.y (" + shape_str(M, dim, hidden) + ")");
  const TileMaps maps = tile_maps(x, w_gate, w_up, m, M, dim, hidden, kTeachBM, kTeachBN / 2, kTeachBM);
  allow_smem<geglu_gemm_teach_kernel>(TeachSmem::kBytes);
  const dim3 grid(static_cast<unsigned>(m_tiles), static_cast<unsigned>(n_tiles));
  geglu_gemm_teach_kernel<<<grid, kTeachThreads, TeachSmem::kBytes, stream>>>(maps.x, maps.gate, maps.up, maps.m,
                                                                              static_cast<int>(ceil_div(dim, kBK)));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch04
