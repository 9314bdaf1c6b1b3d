// The epilogue mode's forward (Hopper, sm_90a only): chapter 04's `fast` kernel with its kKeep flag on, so the one
// GEMM that makes h = gelu(x @ W_gate^T) * (x @ W_up^T) also stores g and u for the backward (04_epilogue_mlp/
// overlap.cuh, the overlap kernel that 04 offers later chapters as a template: a tile's g and u go out through the
// staging tile and TMA, in two steps of its epilogue before h's chunks, under the next tile's wgmma). h has 04's bits;
// g and u are its accumulators rounded to bf16, as eager's two GEMMs store them.
#include "04_epilogue_mlp/overlap.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "hopper/launch.h"
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "cuda/check.h"

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

void launch_geglu_gemm_keep_warps(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                                  __nv_bfloat16* h, __nv_bfloat16* g, __nv_bfloat16* u, int64_t M, int64_t dim,
                                  int64_t hidden, cudaStream_t stream);
static void launch_old(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                            __nv_bfloat16* h, __nv_bfloat16* g, __nv_bfloat16* u, int64_t M, int64_t dim,
                            int64_t hidden, cudaStream_t stream);
void launch_geglu_gemm_keep(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                            __nv_bfloat16* h, __nv_bfloat16* g, __nv_bfloat16* u, int64_t M, int64_t dim,
                            int64_t hidden, cudaStream_t stream) {
  const char* v = getenv("KEEP_WARPS");
  const bool warps = v && v[0] == '1';
  const char* cmp = getenv("KEEP_COMPARE");
  if (cmp && cmp[0] == '1' && M * hidden > 0) {
    const size_t n = size_t(M) * hidden;
    __nv_bfloat16 *b = nullptr;
    CUDA_CHECK(cudaMalloc(&b, 3 * n * 2));
    CUDA_CHECK(cudaMemsetAsync(b, 0xff, 3 * n * 2, stream));
    CUDA_CHECK(cudaMemsetAsync(h, 0xff, n * 2, stream));
    CUDA_CHECK(cudaMemsetAsync(g, 0xff, n * 2, stream));
    CUDA_CHECK(cudaMemsetAsync(u, 0xff, n * 2, stream));
    launch_old(x, w_gate, w_up, b, b + n, b + 2 * n, M, dim, hidden, stream);
    if (warps) launch_geglu_gemm_keep_warps(x, w_gate, w_up, h, g, u, M, dim, hidden, stream);
    else launch_old(x, w_gate, w_up, h, g, u, M, dim, hidden, stream);
    std::vector<uint16_t> a(3 * n), c(3 * n);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(a.data(), b, 3 * n * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(c.data(), h, n * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(c.data() + n, g, n * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(c.data() + 2 * n, u, n * 2, cudaMemcpyDeviceToHost));
    size_t diff[3] = {0, 0, 0}, ffff = 0;
    for (size_t i = 0; i < 3 * n; ++i) { if (a[i] != c[i]) diff[i / n]++; if (c[i] == 0xffff) ffff++; }
    fprintf(stderr, "KEEP_COMPARE warps=%d M=%ld dim=%ld hidden=%ld: differ h %zu g %zu u %zu of %zu; 0xffff left %zu\n",
            int(warps), long(M), long(dim), long(hidden), diff[0], diff[1], diff[2], n, ffff);
    CUDA_CHECK(cudaFree(b));
    return;
  }
  if (warps) return launch_geglu_gemm_keep_warps(x, w_gate, w_up, h, g, u, M, dim, hidden, stream);
  launch_old(x, w_gate, w_up, h, g, u, M, dim, hidden, stream);
}
static void launch_old(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                            __nv_bfloat16* h, __nv_bfloat16* g, __nv_bfloat16* u, int64_t M, int64_t dim,
                            int64_t hidden, cudaStream_t stream) {
  // g's and u's maps, built on each call (two cuTensorMapEncodeTiled on the host, a few microseconds).
  const ch04::overlap::Kept kept{hopper::tile_map(g, M, hidden, hidden, ch04::overlap::kRows, "g", "geglu_gemm"),
                                 hopper::tile_map(u, M, hidden, hidden, ch04::overlap::kRows, "u", "geglu_gemm")};
  ch04::overlap::launch_overlap_kernel<geglu_gemm_keep_kernel>("fast", x, w_gate, w_up, h, M, dim, hidden, stream,
                                                               kept);
}

}  // namespace ch06
