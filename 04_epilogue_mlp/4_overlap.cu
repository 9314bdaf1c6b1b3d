// "overlap": coop (3_coop.cu), and each consumer runs the epilogue of its previous tile INSIDE the main loop of its
// next one, while the tensor cores work through that loop's wgmma. The kernel is overlap.cuh's (`diff 3_coop.cu
// overlap.cuh` is the lesson), with the exact epilogue arithmetic. (H100, blog shape: ~125-129 us; TUNING.md.)
#include "04_epilogue_mlp/overlap.cuh"

namespace ch04 {
namespace {

__global__ void __launch_bounds__(overlap::kThreads, 1)
    geglu_gemm_overlap_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_gate,
                              const __grid_constant__ CUtensorMap map_up, const __grid_constant__ CUtensorMap map_m,
                              int m_tiles, int n_tiles, int k_tiles) {
  overlap::geglu_gemm_overlap</*kFast=*/false>(map_x, map_gate, map_up, map_m, m_tiles, n_tiles, k_tiles);
}

}  // namespace

void launch_overlap(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                    int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream) {
  overlap::launch_overlap_kernel<geglu_gemm_overlap_kernel>("overlap", x, w_gate, w_up, m, M, dim, hidden, stream);
}

}  // namespace ch04
