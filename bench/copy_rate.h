// The ceiling a memory-bound kernel is measured against: a device-to-device copy that moves the same number of bytes
// (reads half of them, writes half), timed the same way in the same run.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "chapter/gpu_timer.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/tensor.h"

namespace benchmarks {

// Exactly `iters` timed runs of a cudaMemcpyAsync of `bytes_moved / 2` bytes (it reads and writes each byte once).
inline ladder::GpuTiming copy_times(const ladder::GpuTimer& timer, int iters, int64_t bytes_moved) {
  const int64_t half = bytes_moved / 2;
  const ladder::Tensor src = ladder::empty({(half + 1) / 2}, ladder::DType::BF16);  // `half` bytes, 2 a value
  const ladder::Tensor dst = ladder::empty({(half + 1) / 2}, ladder::DType::BF16);
  CUDA_CHECK(cudaMemset(src.data, 0x3C, half));
  return timer.time([&] { CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, half, cudaMemcpyDeviceToDevice, 0)); },
                    iters, 0);
}

}  // namespace benchmarks
