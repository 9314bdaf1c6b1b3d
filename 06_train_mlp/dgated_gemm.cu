// The epilogue mode's backward GEMM (Hopper, sm_90a only): dh = dy @ W_down, with the backward of h = gelu(g) * u in
// its epilogue, so dh never reaches memory. Each tile's accumulators (dh in float32) meet g and u read from memory in
// the same thread; the thread writes dg and du (into [dg | du], the layout the next two GEMMs read) and h itself,
// recomputed, for dW_down = dy^T @ h. Chapter 04 wrote the forward's gated GEMM; this is its mirror, built from the
// same pieces (04_epilogue_mlp/pipeline.cuh: the ring of stages, the producer's TMA loads, one stage of wgmma).
//
// The shape is 04's "teach" kernel: one 64-row tile per block, one consumer warpgroup, one producer warp, here with a
// 64 x 128 tile of dh (one wgmma m64n128k16 per k-step), four stages and two wgmma stages in flight (04's
// issue_k_tiles), in 97 KB of shared memory, so two blocks share an SM and one's epilogue (memory-bound: 10 bytes per
// element of dh) overlaps the other's math. The epilogue loads g and u for 8 pairs of columns before it computes and
// stores any: with the pointers __restrict__, the loads of a chunk are in flight together instead of one at a time. The
// weight operand is W_down^T [hidden, dim], K-major like 04's weights: the op makes it with a transposing copy
// (dgated_gemm_op.cu).
//
// The numbers: dh is rounded to bf16 first, as cuBLAS stores it in the fused mode, then the one gelu_mul_backward
// arithmetic (gelu_backward.cuh). Where this kernel's float32 sum rounds dh to the same bf16 as cuBLAS's, dg and du
// are the fused mode's bits; where the two sums round differently (their order differs), one dh differs by one step.
#include "04_epilogue_mlp/launch.h"
#include "04_epilogue_mlp/pipeline.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/gelu_backward.cuh"

namespace ch06 {
namespace {

using bf16 = __nv_bfloat16;
using ch04::kBK;
using ch04::kWarpgroup;

constexpr int kBM = 64, kBN = 128, kStages = 4, kThreads = kWarpgroup + 32;
constexpr int kChunk = 8;                             // column pairs whose g and u the epilogue loads before using any
using Smem = ch04::SmemLayout<kBM, kBN, kStages, 0>;  // no output staging: the epilogue writes straight to memory

__device__ __forceinline__ void store_pair(bf16* p, bf16 lo, bf16 hi) {
  *reinterpret_cast<__nv_bfloat162*>(p) = __halves2bfloat162(lo, hi);
}

__global__ void __launch_bounds__(kThreads)
    dgated_gemm_kernel(const __grid_constant__ CUtensorMap map_dy, const __grid_constant__ CUtensorMap map_wt,
                       const bf16* g, const bf16* u, bf16* dg, bf16* du, int64_t ld_dgu, bf16* h, int M, int H,
                       int k_tiles) {
  using L = Smem;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = ch04::align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;
  if (threadIdx.x == 0) {
    ch04::init_ring<kStages>(full, empty, 1);
    ch04::fence_barrier_init();
  }
  __syncthreads();

  const int m0 = blockIdx.x * kBM;  // first row of dy and of dh
  const int n0 = blockIdx.y * kBN;  // first hidden unit: row of W_down^T, column of dh

  if (threadIdx.x >= kWarpgroup) {  // the producer: one lane issues every TMA load
    if (threadIdx.x == kWarpgroup) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        if (kt >= kStages) ch04::mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);
        uint8_t* a = smem + s * L::kStageBytes;
        uint8_t* b = a + L::kABytes;
        ch04::mbar_arrive_expect_tx(&full[s], L::kStageBytes);
        ch04::tma_load_2d(a, &map_dy, &full[s], kt * kBK, m0);                             // dy[m0 : m0+64, k]
        ch04::tma_load_2d(b, &map_wt, &full[s], kt * kBK, n0);                             // W_down^T rows n0..
        ch04::tma_load_2d(b + L::kBHalfBytes, &map_wt, &full[s], kt * kBK, n0 + kBN / 2);  // ..n0 + kBN
      }
    }
    return;
  }

  float acc[1][kBN / 2];
  ch04::issue_k_tiles<L, kStages, 1, kBN>(acc, smem, full, empty, 0, k_tiles, 0, threadIdx.x);
  ch04::finish_k_tiles<kStages, 1, kBN / 2>(acc, empty, k_tiles - 1, threadIdx.x);

  // The epilogue. Register i holds row 16 * warp + lane / 4 + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2 * (lane % 4)
  // + i % 2 of the tile (wgmma's accumulator layout, 04_epilogue_mlp/epilogue.cuh): pairs of neighbouring columns,
  // read and written 4 bytes at a time. H is a multiple of 8, so a pair is in or out of the matrix as a whole.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int c0 = 0; c0 < kBN / 4; c0 += kChunk) {  // pair p holds registers 2p and 2p + 1
    __nv_bfloat162 g2[kChunk], u2[kChunk];
#pragma unroll
    for (int p = 0; p < kChunk; ++p) {  // every load of the chunk first
      const int i = 2 * (c0 + p);
      const int row = m0 + 16 * warp + lane / 4 + 8 * ((i / 2) % 2), col = n0 + 8 * (i / 4) + 2 * (lane % 4);
      if (row < M && col < H) {
        const int64_t at = static_cast<int64_t>(row) * H + col;
        g2[p] = *reinterpret_cast<const __nv_bfloat162*>(g + at);
        u2[p] = *reinterpret_cast<const __nv_bfloat162*>(u + at);
      }
    }
#pragma unroll
    for (int p = 0; p < kChunk; ++p) {
      const int i = 2 * (c0 + p);
      const int row = m0 + 16 * warp + lane / 4 + 8 * ((i / 2) % 2), col = n0 + 8 * (i / 4) + 2 * (lane % 4);
      if (row >= M || col >= H) continue;
      const int64_t at = static_cast<int64_t>(row) * H + col, at_dgu = static_cast<int64_t>(row) * ld_dgu + col;
      const __nv_bfloat162 dh2 = __floats2bfloat162_rn(acc[0][i], acc[0][i + 1]);  // dh as cuBLAS would store it
      bf16 dg_lo, dg_hi, du_lo, du_hi;
      gelu_mul_backward_one(dh2.x, g2[p].x, u2[p].x, &dg_lo, &du_lo);
      gelu_mul_backward_one(dh2.y, g2[p].y, u2[p].y, &dg_hi, &du_hi);
      store_pair(dg + at_dgu, dg_lo, dg_hi);
      store_pair(du + at_dgu, du_lo, du_hi);
      store_pair(h + at, gelu_mul_one(g2[p].x, u2[p].x), gelu_mul_one(g2[p].y, u2[p].y));  // h, as gelu_mul made it
    }
  }
}

}  // namespace

void launch_dgated_gemm(const bf16* dy, const bf16* w_down_t, const bf16* g, const bf16* u, bf16* dg, bf16* du,
                        int64_t ld_dgu, bf16* h, int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream) {
  if (M == 0 || hidden == 0) return;
  // The maps: dy as 04's x (boxes of 64 rows), W_down^T as its weights (boxes of kBN / 2 rows); h fills the output
  // slot, unused here.
  const ch04::TileMaps maps = ch04::tile_maps(dy, w_down_t, w_down_t, h, M, dim, hidden, kBM, kBN / 2, kBM);
  ch04::allow_smem<dgated_gemm_kernel>(Smem::kBytes);
  const dim3 grid(static_cast<unsigned>(ch04::ceil_div(M, kBM)), static_cast<unsigned>(ch04::ceil_div(hidden, kBN)));
  dgated_gemm_kernel<<<grid, kThreads, Smem::kBytes, stream>>>(maps.x, maps.gate, g, u, dg, du, ld_dgu, h,
                                                               static_cast<int>(M), static_cast<int>(hidden),
                                                               static_cast<int>(ch04::ceil_div(dim, kBK)));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch06
