// Chapter 06: the hand-written kernels of the MLP's backward pass.
//
// eager_ops.cu: the two elementwise ops eager autograd runs that the forward chapters have no kernel for,
// aten::gelu_backward (GeluBackward0) and aten::add_ (the sum of x's two gradients). The products of MulBackward0 are
// 03_simple_mlp's aten::mul.
// gelu_mul_backward.cu: the fused mode's one kernel in place of MulBackward0's two muls and GeluBackward0's
// gelu_backward: it reads dh, g and u once and writes dg and du.
//
// Every op opens a cpu_op range named like the op (ladder::OpRange), checks its tensors (bf16, shapes, strides; else
// ladder::Error) and launches on ladder::current_stream(), without synchronizing.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/tensor.h"

namespace ch06 {

// grad_in = bf16(grad * gelu_tanh'(g)) elementwise (gelu_backward.cuh). All three flat bf16 of the same size.
void gelu_backward(const ladder::Tensor& grad, const ladder::Tensor& g, const ladder::Tensor& grad_in);
// a += b elementwise (bf16, flat, same size), rounded to bf16.
void add_(const ladder::Tensor& a, const ladder::Tensor& b);

// The fused backward of h = gelu(g) * u, given dh, with the roundings eager autograd makes:
//     du = bf16(dh * bf16(gelu(g)))              (MulBackward0: gelu(g) as the forward stored it)
//     dg = bf16(bf16(dh * u) * gelu'(g))         (MulBackward0, then GeluBackward0 in float32)
// so dg and du are bit for bit what the eager ops give. dh, g, u: contiguous [M, H]; dg, du: [M, H] views whose rows
// may be strided (stride(1) == 1, stride(0) >= H), so both can be halves of one [M, 2H] tensor [dg | du] that a single
// GEMM then reads. dg and du must not overlap each other or the inputs.
void gelu_mul_backward(const ladder::Tensor& dh, const ladder::Tensor& g, const ladder::Tensor& u,
                       const ladder::Tensor& dg, const ladder::Tensor& du);

// Whether a and b share no element. Each is contiguous, or a 2-D view with unit column stride: rows of size(-1)
// elements, its row stride apart. Apart they are when their byte spans are, or when they have one row stride and sit
// side by side within it (the halves of [dg | du]). The check the ops make that an output overlaps no other tensor.
bool views_disjoint(const ladder::Tensor& a, const ladder::Tensor& b);

// The raw launcher the op calls, for the tests: rows x cols elements; ld_in is the row stride of dh, g and u, ld_out
// that of dg and du. Any rows, cols >= 0; 16-byte vectors when cols, the strides and the pointers allow, else one
// element per thread.
void launch_gelu_mul_backward(const __nv_bfloat16* dh, const __nv_bfloat16* g, const __nv_bfloat16* u,
                              __nv_bfloat16* dg, __nv_bfloat16* du, int64_t rows, int64_t cols, int64_t ld_in,
                              int64_t ld_out, cudaStream_t stream);

}  // namespace ch06
