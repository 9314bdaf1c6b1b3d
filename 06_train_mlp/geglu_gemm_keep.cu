// The epilogue mode's forward (Hopper, sm_90a only): chapter 04's `fast` kernel with its kKeep flag on, so the one
// GEMM that makes h = gelu(x @ W_gate^T) * (x @ W_up^T) also stores g and u for the backward (04_epilogue_mlp/
// overlap.cuh, the overlap kernel that 04 offers later chapters as a template: a tile's g and u go out through the
// staging tile and TMA, in two steps of its epilogue before h's chunks, under the next tile's wgmma). h has 04's bits;
// g and u are its accumulators rounded to bf16, as eager's two GEMMs store them.
#include "04_epilogue_mlp/overlap.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "hopper/launch.h"

namespace ch06 {
namespace {

__global__ void __launch_bounds__(ch04::overlap::kThreads, 1)
    geglu_gemm_keep_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_gate,
                           const __grid_constant__ CUtensorMap map_up, const __grid_constant__ CUtensorMap map_m,
                           int m_tiles, int n_tiles, int k_tiles, const __grid_constant__ ch04::overlap::Kept kept) {
  ch04::overlap::geglu_gemm_overlap</*kFast=*/true, /*kKeep=*/true>(map_x, map_gate, map_up, map_m, m_tiles, n_tiles,
                                                                    k_tiles, &kept);
}

}  // namespace

void launch_geglu_gemm_keep(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                            __nv_bfloat16* h, __nv_bfloat16* g, __nv_bfloat16* u, int64_t M, int64_t dim,
                            int64_t hidden, cudaStream_t stream) {
  // g's and u's maps, built on each call (two cuTensorMapEncodeTiled on the host, a few microseconds).
  const ch04::overlap::Kept kept{hopper::tile_map(g, M, hidden, hidden, ch04::overlap::kRows, "g", "geglu_gemm"),
                                 hopper::tile_map(u, M, hidden, hidden, ch04::overlap::kRows, "u", "geglu_gemm")};
  ch04::overlap::launch_overlap_kernel<geglu_gemm_keep_kernel>("fast", x, w_gate, w_up, h, M, dim, hidden, stream,
                                                               kept);
}

}  // namespace ch06
