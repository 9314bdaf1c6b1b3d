// What every launcher of chapter 04 shares (kernels.cu defines it): the argument rules and the four tensor maps of one
// problem, built once and remembered, so a launch makes no call but the kernel's own. The GPU's attributes, one tensor
// map, the persistent grid and the shared-memory allowance are the Hopper room's (hopper/launch.h).
#pragma once

#include <cuda.h>  // CUtensorMap (a type only: nothing here links libcuda)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "hopper/launch.h"

namespace ch04 {

using namespace hopper;  // the Hopper machinery (common/hopper/), by its plain names

// Throws ladder::Error("geglu_gemm: " + what): the chapter prints its one line and exits 1.
[[noreturn]] void fail(const std::string& what);

// "M = 8192, dim = 768, hidden = 3072", for messages.
std::string shape_str(int64_t M, int64_t dim, int64_t hidden);

// The rules every launcher enforces before its kernel (kernels.cuh lists them), for the variant named `variant`:
// sizes, the shape rule, 16-byte aligned pointers, m overlapping none of the inputs, a GPU that runs the variant.
// Returns false when there is nothing for a kernel to do: an empty output, or dim == 0, where m = gelu(0) * 0 = 0
// everywhere and a memset on `stream` has written it.
bool check_launch(const char* variant, const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                  __nv_bfloat16* m, int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream);

// The four tensor maps of one problem, for tiles of 64 columns (128 bytes, the swizzle width) and these row counts:
// x in boxes of x_rows rows, each weight in boxes of w_rows rows, m in boxes of m_rows rows. Built on the first call
// for these pointers, sizes and boxes and remembered (hopper/map_cache.h), so a forward called again encodes nothing.
struct TileMaps {
  CUtensorMap x, gate, up, m;
};
TileMaps tile_maps(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                   int64_t M, int64_t dim, int64_t hidden, int x_rows, int w_rows, int m_rows);

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
