// What every launcher of chapter 04 shares (kernels.cu defines it): the argument rules, the GPU's attributes and the
// tensor maps, each asked or built once and remembered, so a launch makes no call but the kernel's own.
#pragma once

#include <cuda.h>  // CUtensorMap (a type only: nothing here links libcuda)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "cuda/check.h"

namespace ch04 {

// Throws ladder::Error("geglu_gemm: " + what): the chapter prints its one line and exits 1.
[[noreturn]] void fail(const std::string& what);

// "M = 8192, dim = 768, hidden = 3072", for messages.
std::string shape_str(int64_t M, int64_t dim, int64_t hidden);

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The rules every launcher enforces before its kernel (kernels.cuh lists them), for the variant named `variant`:
// sizes, the shape rule, 16-byte aligned pointers, m overlapping none of the inputs, a GPU that runs the variant.
// Returns false when there is nothing for a kernel to do: an empty output, or dim == 0, where m = gelu(0) * 0 = 0
// everywhere and a memset on `stream` has written it.
bool check_launch(const char* variant, const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                  __nv_bfloat16* m, int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream);

// The current GPU's compute capability and SM count, asked once per device and remembered.
struct DeviceInfo {
  int major = 0, minor = 0, sms = 0;
};
const DeviceInfo& current_device();

// A tensor map for a row-major bf16 matrix [rows, cols] whose rows are `row_stride` elements apart (a multiple of 8,
// at a 16-byte aligned base: TMA's rules), read or written in boxes of box_rows x 64 (64 columns: 128 bytes, the
// width of the 128-byte swizzle). Out-of-range box elements load as zeros and are not stored. `name` is for the error.
CUtensorMap tile_map(const void* base, int64_t rows, int64_t cols, int64_t row_stride, int box_rows, const char* name);

// The four tensor maps of one problem, for tiles of 64 columns (128 bytes, the swizzle width) and these row counts:
// x in boxes of x_rows rows, each weight in boxes of w_rows rows, m in boxes of m_rows rows. Built on the first call
// for these pointers, sizes and boxes and remembered (map_cache.h), so a forward called again encodes nothing.
struct TileMaps {
  CUtensorMap x, gate, up, m;
};
TileMaps tile_maps(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                   int64_t M, int64_t dim, int64_t hidden, int x_rows, int w_rows, int m_rows);

// The grid of a persistent kernel: one block per SM at most, and a check that its tile counters fit in 32 bits.
int persistent_grid(int64_t m_tiles, int64_t n_tiles, int64_t k_tiles);

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

// The launchers of the Hopper variant files, in reading order (1_teach.cu .. 5_fast.cu), each a GegluGemmLaunch.
void launch_teach(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                  int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream);
void launch_pingpong(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                     int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream);
void launch_coop(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                 int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream);
void launch_overlap(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                    int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream);
void launch_fast(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                 int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream);

}  // namespace ch04
