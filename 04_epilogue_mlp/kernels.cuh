// Chapter 04: the GeGLU MLP's first half, m = gelu_tanh(x @ W_gate^T) * (x @ W_up^T), as ONE hand-written GEMM whose
// epilogue does the GELU and the multiply: the op geglu_gemm. Chapter 03 ran it as three kernels (two cuBLAS GEMMs
// writing g and u to memory, then gelu_mul reading them back); here g and u never leave the registers.
//
// The kernel comes in named variants: a name, one line saying what it does, and a launcher. On a Hopper GPU (sm_90)
// five of them, one file each, to read in this order, each `diff` with the one before it being what it adds:
//   1_teach.cu     one 64 x 128 tile per block, one consumer warpgroup: the one to read first;
//   2_pingpong.cu  a persistent grid, two consumer warpgroups taking turns on the tensor cores;
//   3_coop.cu      both consumers on one 128 x 128 tile: twice the math per byte loaded;
//   4_overlap.cu   each consumer runs its previous tile's epilogue between its next tile's wgmma;
//   5_fast.cu      overlap with the cheapest exact epilogue arithmetic: the one to run.
// They share ptx.cuh (the instruction wrappers), pipeline.cuh (the ring of stages, the producer, the TMA store) and
// epilogue.cuh (how g meets u in one thread, and the arithmetic). On every GPU from the A100 (sm_80) on, one more:
//   portable.cu    mma.sync, ldmatrix and cp.async instead of wgmma and TMA: the default everywhere but on sm_90.
// Measured on an H100 SXM (M = 8192, dim = 768, hidden = 3072, L2 flushed, against 114-118 us for cuBLAS on the
// concatenated [2 * hidden, dim] weight; TUNING.md has every measurement): teach ~173 us, pingpong ~141 us, coop
// ~123-131 us, overlap ~125-129 us, fast ~122-125 us (1.03-1.09 x cuBLAS over the runs; 1.02 x in back-to-back use).
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
//    dim % 8 == 0 and hidden % 8 == 0, else throws a ladder::Error naming the rule (geglu_gemm_shape_rule below);
//  - needs the four pointers 16-byte aligned (cudaMalloc gives 256), else throws a ladder::Error;
//  - refuses an m whose bytes overlap x, w_gate or w_up (geglu_gemm_overlap_rule below) with a ladder::Error;
//  - runs only on a GPU its variant runs on (geglu_gemm_cannot_run below), else throws a ladder::Error saying so;
//  - checks the launch (CUDA_CHECK_LAUNCH) and throws a ladder::Error on a CUDA error; it does not synchronize.
using GegluGemmLaunch = void (*)(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                                 __nv_bfloat16* m, int64_t M, int64_t dim, int64_t hidden, cudaStream_t stream);
using GegluGemmVariant = ladder::Variant<GegluGemmLaunch>;

// The variants built into this program, in reading order: the Hopper ones only when the build has sm_90a code
// (CMAKE_CUDA_ARCHITECTURES includes 90), then "portable". Tests and benchmarks iterate it, so a variant added to
// the list is checked and timed as is.
const std::vector<GegluGemmVariant>& geglu_gemm_variants();

// The variant called `name`, or a ladder::UsageError listing the valid names.
const GegluGemmVariant& find_geglu_gemm_variant(const std::string& name);

// Empty when the kernels can take these sizes, else one line naming the rule they break: every row of x, the weights
// and m must start on a 16-byte boundary (TMA's rule for the Hopper variants, cp.async's 16-byte copies for the
// portable one), so dim and hidden must be multiples of 8 (bf16 values). The chapter asks this before any GPU work,
// to report a bad shape as a usage error.
std::string geglu_gemm_shape_rule(int64_t dim, int64_t hidden);

// Empty when m (M x hidden bf16 values) shares no byte with x (M x dim), w_gate or w_up (hidden x dim each), else one
// line naming the input it overlaps: a GEMM reads every input many times while it writes m, so it cannot run in place.
std::string geglu_gemm_overlap_rule(const void* x, const void* w_gate, const void* w_up, const void* m, int64_t M,
                                    int64_t dim, int64_t hidden);

// Empty when `variant` runs on a GPU of compute capability major.minor (the Hopper variants: 9.0 only, as they are
// built for sm_90a alone; portable: 8.0 and later), else one line saying why not. An unknown name is a UsageError.
std::string geglu_gemm_cannot_run(const std::string& variant, int major, int minor);

// The variant geglu_gemm runs when none is named: "fast" on compute capability 9.0 when this build has the Hopper
// variants, else "portable".
const char* geglu_gemm_default_variant(int major, int minor);

// The op the chapter's forward calls in place of 03's gate GEMM, up GEMM and gelu_mul: m = gelu(x @ w_gate^T) *
// (x @ w_up^T), one kernel. It opens a cpu_op range "ladder::geglu_gemm" (ours, not an aten op) with its inputs'
// shapes, so the kernel carries the op's External id in the trace. Tensors: bf16, contiguous; x [.., dim] (any
// leading shape), w_gate and w_up [hidden, dim], m with x's rows x hidden elements, overlapping none of them (else
// ladder::Error). variant "" = geglu_gemm_default_variant of the current GPU.
void geglu_gemm(const ladder::Tensor& x, const ladder::Tensor& w_gate, const ladder::Tensor& w_up,
                const ladder::Tensor& m, const std::string& variant = "");

}  // namespace ch04
