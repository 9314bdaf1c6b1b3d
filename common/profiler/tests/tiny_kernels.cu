// The one kernel the profiler's GPU test launches, in a file of its own: the test itself is host code (g++ compiles
// it), only this file goes through nvcc.
#include "profiler/tests/tiny_kernels.h"

namespace ladder::test_kernels {

namespace {
__global__ void scale_kernel(float* x, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}
}  // namespace

cudaError_t launch_scale(float* x, int n, float factor) {
  scale_kernel<<<(n + 255) / 256, 256>>>(x, n, factor);
  return cudaGetLastError();
}

}  // namespace ladder::test_kernels
