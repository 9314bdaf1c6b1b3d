// The host side of the ladder's Hopper kernels: the GPU's attributes, the tensor maps TMA reads and writes, the grid of
// a persistent kernel and its shared-memory allowance, each asked or built once and remembered, so a launch makes no
// call but the kernel's own. launch.cpp defines them; the kernels are the chapters' (04's variants, 06's backward
// GEMM).
#pragma once

#include <cuda.h>  // CUtensorMap (a type only: nothing here links libcuda)
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <set>

#include "cuda/check.h"

namespace hopper {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The current GPU's compute capability and SM count, asked once per device and remembered.
struct DeviceInfo {
  int major = 0, minor = 0, sms = 0;
};
const DeviceInfo& current_device();

// A tensor map for a row-major bf16 matrix [rows, cols] whose rows are `row_stride` elements apart (a multiple of 8,
// at a 16-byte aligned base: TMA's rules), read or written in boxes of box_rows x 64 (64 columns: 128 bytes, the
// width of the 128-byte swizzle). Out-of-range box elements load as zeros and are not stored. `name` is for the error
// (a ladder::Error naming `op`, the op that asked: "geglu_gemm: cuTensorMapEncodeTiled failed for x ...").
CUtensorMap tile_map(const void* base, int64_t rows, int64_t cols, int64_t row_stride, int box_rows, const char* name,
                     const char* op);

// The grid of a persistent kernel: one block per SM at most (fewer under gpu/stream.h's gemm_sm_limit), and a check
// that its tile counters fit in 32 bits (else a ladder::Error naming `op`).
int persistent_grid(int64_t m_tiles, int64_t n_tiles, int64_t k_tiles, const char* op);

// Lets `kernel` use `bytes` of dynamic shared memory (past the default 48 KB) on the current GPU. The attribute is
// each device's own, so it is set once per device: the first launch on a device happens outside any CUDA graph
// capture, and a captured forward makes no call but the launch itself.
template <auto kernel>
void allow_smem(int bytes) {
  static std::mutex mutex;
  static std::set<int> devices;  // where the attribute is set
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));  // answered from the runtime's own state
  const std::lock_guard<std::mutex> lock(mutex);
  if (devices.count(device)) return;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  devices.insert(device);
}

}  // namespace hopper
