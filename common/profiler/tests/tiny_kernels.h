#pragma once

#include <cuda_runtime_api.h>

namespace ladder::test_kernels {

// x[i] *= factor for i < n, on the current stream (the legacy default stream). Returns the launch's error.
cudaError_t launch_scale(float* x, int n, float factor);

}  // namespace ladder::test_kernels
