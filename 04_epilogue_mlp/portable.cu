// Placeholder body of the portable variant (one thread per output, float32 dot products): correct, slow. The
// mma.sync kernel replaces it.
#include "04_epilogue_mlp/portable.cuh"
#include "cuda/check.h"
#include "gpu/gelu.cuh"

namespace ch04 {
namespace {

__global__ void naive(const __nv_bfloat16* x, const __nv_bfloat16* wg, const __nv_bfloat16* wu, __nv_bfloat16* m,
                      int64_t M, int64_t dim, int64_t hidden) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= M * hidden) return;
  const int64_t r = i / hidden, c = i % hidden;
  float g = 0, u = 0;
  for (int64_t k = 0; k < dim; ++k) {
    const float a = __bfloat162float(x[r * dim + k]);
    g = __fmaf_rn(a, __bfloat162float(wg[c * dim + k]), g);
    u = __fmaf_rn(a, __bfloat162float(wu[c * dim + k]), u);
  }
  const float h = __bfloat162float(__float2bfloat16_rn(ladder::gelu_tanh_f32(__bfloat162float(__float2bfloat16_rn(g)))));
  m[i] = __float2bfloat16_rn(__fmul_rn(h, __bfloat162float(__float2bfloat16_rn(u))));
}

}  // namespace

void launch_portable(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                     int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream) {
  if (M == 0 || hidden == 0) return;
  const int64_t n = M * hidden;
  naive<<<unsigned((n + 255) / 256), 256, 0, stream>>>(x, w_gate, w_up, m, M, dim, hidden);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch04
