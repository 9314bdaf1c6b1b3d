// The epilogue mode's two hand-written GEMMs (Hopper only) and the ops the chapter calls (dgated_gemm_op.cu): the
// forward, a gated GEMM that also keeps g and u (geglu_gemm_keep.cu), and the backward, dh = dy @ W_down with
// the backward of h = gelu(g) * u in its epilogue (dgated_gemm.cu).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "gpu/tensor.h"

namespace ch06 {

// Empty when the epilogue mode runs here, else the one line saying why not: its kernel exists only in a build for
// sm_90 (CMAKE_CUDA_ARCHITECTURES with 90) and runs only on a GPU of compute capability 9.0 (a Hopper); dim and hidden
// must be multiples of 8 (dgated_gemm_shape_rule).
std::string dgated_gemm_cannot_run(int major, int minor, int64_t dim, int64_t hidden);
// The size rule alone, the same in every build and on every GPU: dim and hidden multiples of 8 (TMA's 16-byte rows).
std::string dgated_gemm_shape_rule(int64_t dim, int64_t hidden);

// From dy [M, dim], W_down [dim, hidden] (as nn.Linear stores it), g and u [M, hidden] (views with one row stride that
// is a multiple of 8, e.g. the halves of [g | u]): dh = dy @ W_down stays on chip; writes dg and du (views [M, hidden]
// with one row stride that is a multiple of 8, e.g. the halves of [dg | du])
// with eager's roundings from dh rounded to bf16, and h = gelu(g) * u [M, hidden] as the forward's gelu_mul computes
// it. Opens the cpu_op range "ladder::dgated_gemm". The kernel reads W_down as it is stored (no transposed copy). All
// bf16, every tensor 16-byte aligned (TMA's rule), dg, du and h sharing no element with each other or an input;
// ladder::Error for anything else.
void dgated_gemm(const ladder::Tensor& dy, const ladder::Tensor& w_down, const ladder::Tensor& g,
                 const ladder::Tensor& u, const ladder::Tensor& dg, const ladder::Tensor& du, const ladder::Tensor& h);

// h = gelu(x @ W_gate^T) * (x @ W_up^T) with chapter 04's geglu_gemm's bits (its `fast` kernel's arithmetic), and
// g = x @ W_gate^T, u = x @ W_up^T rounded to bf16, from one kernel (geglu_gemm_keep.cu). x [..., dim]; W_gate, W_up
// [hidden, dim]; h, g, u contiguous [rows, hidden]. Opens the cpu_op range "ladder::geglu_gemm". Refused
// (ladder::Error) where dgated_gemm_cannot_run says so, and for anything 04's geglu_gemm refuses (for each of h, g, u:
// 16-byte aligned, overlapping no input), and where h, g and u overlap each other.
void geglu_gemm_keep(const ladder::Tensor& x, const ladder::Tensor& w_gate, const ladder::Tensor& w_up,
                     const ladder::Tensor& h, const ladder::Tensor& g, const ladder::Tensor& u);
// Its launcher (geglu_gemm_keep.cu; only in a build with sm_90a code). M == 0 or hidden == 0 launches nothing; dim ==
// 0 writes zeros.
void launch_geglu_gemm_keep(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                            __nv_bfloat16* h, __nv_bfloat16* g, __nv_bfloat16* u, int64_t M, int64_t dim,
                            int64_t hidden, cudaStream_t stream);

// The kernel's launcher (dgated_gemm.cu): w_down [dim, hidden] row-major; g and u with row stride ld_gu, dg and du
// with row stride ld_dgu; h contiguous [M, hidden]. Only in a build with sm_90a code (LADDER_HAVE_SM90A). It picks
// one of two kernels by dim: below kDgatedWideFromDim the epilogue is the larger half of the work and the kernel of
// 128 x 128 tiles with seven epilogue warps is faster (dgated_gemm.cu, "narrow"); from it on the main loop is, and
// the kernel of 128 x 256 tiles is (dgated_gemm_wide.cu). On an H200 the two cross between dims 1280 and 1536
// (bench/results/2026-11-29_h200_dgated_wide_rows). Both give the same bits; bench_train_mlp times both.
constexpr int64_t kDgatedWideFromDim = 1536;
using DgatedGemmLauncher = void(const __nv_bfloat16* dy, const __nv_bfloat16* w_down, const __nv_bfloat16* g,
                                const __nv_bfloat16* u, int64_t ld_gu, __nv_bfloat16* dg, __nv_bfloat16* du,
                                int64_t ld_dgu, __nv_bfloat16* h, int64_t M, int64_t dim, int64_t hidden,
                                cudaStream_t stream);
DgatedGemmLauncher launch_dgated_gemm, launch_dgated_gemm_narrow, launch_dgated_gemm_wide;

}  // namespace ch06
