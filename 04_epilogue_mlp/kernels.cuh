// Chapter 04: the GeGLU MLP's first half, m = gelu_tanh(x @ W_gate^T) * (x @ W_up^T), as ONE hand-written Hopper
// GEMM whose epilogue does the GELU and the multiply. Chapter 03 ran this as three kernels (two cuBLAS GEMMs writing g
// and u to memory, then gelu_mul reading them back); here g and u never leave the registers.
//
// The kernel comes in named variants: a name, one line saying what it does, and a launcher. "teach" is the one to read
// first (one consumer warpgroup, one tile per block, top to bottom); "fast" is the one to run. kernels.cu says how
// each works and why.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/tensor.h"
#include "gpu/variants.h"

namespace ch04 {

// m[M, hidden] = bf16(gelu_tanh(bf16(x @ w_gate^T)) rounded to bf16, times bf16(x @ w_up^T)), all row-major:
//   x      [M, dim]       activations
//   w_gate [hidden, dim]  as nn.Linear stores its weight (no repacking, no concatenation needed)
//   w_up   [hidden, dim]  likewise
//   m      [M, hidden]    output
// The rounding is eager PyTorch's: g and u rounded to bf16 (as the two GEMMs store them), GELU in float32 from the
// rounded g and rounded to bf16 (as the gelu kernel stores it), then multiplied in float32 by the rounded u and
// rounded to bf16. So where the dot products round alike, the outputs equal the eager chapters' bit for bit.
//
// Every launcher:
//  - accepts any M >= 0 (M == 0 or hidden == 0 launches nothing), any dim >= 0 and any hidden >= 0 with
//    dim % 8 == 0 and hidden % 8 == 0, else throws a ladder::Error naming the rule (tma_shape_rule below);
//  - needs the four pointers 16-byte aligned (cudaMalloc gives 256), else throws a ladder::Error;
//  - runs only on an sm_90 GPU (Hopper: wgmma and TMA), else throws a ladder::Error saying so;
//  - checks the launch (CUDA_CHECK_LAUNCH) and throws a ladder::Error on a CUDA error; it does not synchronize.
using GatedGemmLaunch = void (*)(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                                 __nv_bfloat16* m, int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream);
using GatedGemmVariant = ladder::Variant<GatedGemmLaunch>;

// The variant list: tests and benchmarks iterate it, so a variant added in kernels.cu is checked and timed as is.
const std::vector<GatedGemmVariant>& gated_gemm_variants();

// The variant called `name`, or a ladder::UsageError listing the valid names.
const GatedGemmVariant& find_gated_gemm_variant(const std::string& name);

// Empty when the kernels can take these sizes, else one line naming the rule they break: TMA, the copy engine that
// moves the tiles, needs every row of x, the weights and m to start on a 16-byte boundary, so dim and hidden must be
// multiples of 8 (bf16 values). The chapter asks this before any GPU work, to report a bad shape as a usage error.
std::string tma_shape_rule(int64_t dim, int64_t hidden);

// Empty on a GPU these kernels run on (compute capability 9.0: they are built for sm_90a only), else why not.
std::string hopper_only(int major, int minor);

// The op the chapter's forward calls in place of 03's gate GEMM, up GEMM and gelu_mul: m = gelu(x @ w_gate^T) *
// (x @ w_up^T), one kernel. It opens a cpu_op range "ladder::geglu_gemm" (ours, not an aten op) with its inputs'
// shapes, so the kernel carries the op's External id in the trace. Tensors: bf16, contiguous; x [.., dim] (any
// leading shape), w_gate and w_up [hidden, dim], m with x's rows x hidden elements (else ladder::Error).
void geglu_gemm(const ladder::Tensor& x, const ladder::Tensor& w_gate, const ladder::Tensor& w_up,
                const ladder::Tensor& m, const std::string& variant = "fast");

}  // namespace ch04
