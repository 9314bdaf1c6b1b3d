// Chapter 04's portable variant: the same gated GEMM built on mma.sync, ldmatrix and cp.async, which every NVIDIA GPU
// from the A100 (sm_80) on runs: natively on sm_80/86/89/90, and JIT-compiled from its compute_80 PTX on newer ones.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ch04 {

// m = gelu(x @ w_gate^T) * (x @ w_up^T) with the rounding of kernels.cuh's geglu_gemm, on `stream`. Shapes and
// pointers as every geglu_gemm launcher takes them (dim % 8 == 0, hidden % 8 == 0, 16-byte aligned pointers; the
// caller checks). Runs on compute capability 8.0 and later. Checks the launch; does not synchronize.
void launch_portable(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up, __nv_bfloat16* m,
                     int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream);

}  // namespace ch04
