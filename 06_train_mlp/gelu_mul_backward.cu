// Chapter 06 (fused): the backward of h = gelu(g) * u in one kernel, as Liger's geglu backward and torch.compile's
// fused gelu_backward/mul kernel do. Eager autograd runs three kernels for it (MulBackward0's two aten::mul, then
// GeluBackward0's aten::gelu_backward) and writes two [M, H] tensors that the next kernel reads straight back
// (dh * u, and dg's input). Here each element of dh, g and u is read once and dg and du are written once:
// 10 bytes per element instead of 22.
//
// The numbers are eager's, bit for bit (kernels.cuh): gelu(g) is recomputed and rounded to bf16 as the forward stored
// it, and dh * u is rounded to bf16 where eager stores it, before gelu's derivative multiplies it.
//
// dg and du are written through a row stride, so they can be the two halves of one [M, 2H] tensor [dg | du]: then
// dx = [dg | du] @ [W_gate; W_up] and [dW_gate; dW_up] = [dg | du]^T @ x are one GEMM each instead of two, with no
// copy.
#include <cstdint>
#include <string>
#include <utility>

#include "06_train_mlp/gelu_backward.cuh"
#include "06_train_mlp/kernels.cuh"
#include "base/error.h"
#include "cuda/check.h"
#include "gpu/elementwise.cuh"
#include "gpu/ops.h"
#include "gpu/stream.h"

namespace ch06 {
namespace {

using bf16 = __nv_bfloat16;
using ladder::kBlock;
using ladder::kVecElems;

// One element per thread, any shape, strides and alignment.
__global__ void __launch_bounds__(kBlock)
    gelu_mul_backward_plain_kernel(const bf16* dh, const bf16* g, const bf16* u, bf16* dg, bf16* du, int64_t rows,
                                   int64_t cols, int64_t ld_in, int64_t ld_out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i >= rows * cols) return;
  const int64_t r = i / cols, c = i % cols;
  const int64_t in = r * ld_in + c, out = r * ld_out + c;
  gelu_mul_backward_one(dh[in], g[in], u[in], &dg[out], &du[out]);
}

// Eight elements per thread: three 16-byte loads, two 16-byte stores. Needs cols, ld_in and ld_out multiples of 8
// and 16-byte-aligned pointers (the launcher checks), so a vector never straddles two rows.
__global__ void __launch_bounds__(kBlock)
    gelu_mul_backward_vec_kernel(const bf16* dh, const bf16* g, const bf16* u, bf16* dg, bf16* du, int64_t rows,
                                 int64_t cols, int64_t ld_in, int64_t ld_out) {
  const int64_t vecs_per_row = cols / kVecElems;
  const int64_t v = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (v >= rows * vecs_per_row) return;
  const int64_t r = v / vecs_per_row, c = (v % vecs_per_row) * kVecElems;
  const int64_t in = r * ld_in + c, out = r * ld_out + c;
  const uint4 vdh = *reinterpret_cast<const uint4*>(dh + in);
  const uint4 vg = *reinterpret_cast<const uint4*>(g + in);
  const uint4 vu = *reinterpret_cast<const uint4*>(u + in);
  const bf16* edh = reinterpret_cast<const bf16*>(&vdh);
  const bf16* eg = reinterpret_cast<const bf16*>(&vg);
  const bf16* eu = reinterpret_cast<const bf16*>(&vu);
  uint4 vdg, vdu;
  bf16* edg = reinterpret_cast<bf16*>(&vdg);
  bf16* edu = reinterpret_cast<bf16*>(&vdu);
#pragma unroll
  for (int k = 0; k < kVecElems; ++k) gelu_mul_backward_one(edh[k], eg[k], eu[k], &edg[k], &edu[k]);
  *reinterpret_cast<uint4*>(dg + out) = vdg;
  *reinterpret_cast<uint4*>(du + out) = vdu;
}

}  // namespace

void launch_gelu_mul_backward(const bf16* dh, const bf16* g, const bf16* u, bf16* dg, bf16* du, int64_t rows,
                              int64_t cols, int64_t ld_in, int64_t ld_out, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const bool vec = cols % kVecElems == 0 && ld_in % kVecElems == 0 && ld_out % kVecElems == 0 &&
                   ladder::aligned16(dh) && ladder::aligned16(g) && ladder::aligned16(u) && ladder::aligned16(dg) &&
                   ladder::aligned16(du);
  if (vec) {
    gelu_mul_backward_vec_kernel<<<ladder::blocks_for(rows * cols / kVecElems), kBlock, 0, stream>>>(
        dh, g, u, dg, du, rows, cols, ld_in, ld_out);
  } else {
    gelu_mul_backward_plain_kernel<<<ladder::blocks_for(rows * cols), kBlock, 0, stream>>>(dh, g, u, dg, du, rows, cols,
                                                                                           ld_in, ld_out);
  }
  CUDA_CHECK_LAUNCH();
}

bool views_disjoint(const ladder::Tensor& a, const ladder::Tensor& b) {
  struct Rows {  // in bytes: `rows` rows of `cols`, `ld` apart, from `at`
    int64_t at, rows, cols, ld;
  };
  const auto rows_of = [](const ladder::Tensor& t) {
    const int64_t n = t.dim() == 0 ? 1 : t.size(-1), e = ladder::dtype_size(t.dtype);
    return Rows{static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.data)), n == 0 ? 0 : t.numel() / n, n * e,
                (t.dim() >= 2 ? t.stride(-2) : n) * e};
  };
  const Rows x = rows_of(a), y = rows_of(b);
  if (x.rows == 0 || x.cols == 0 || y.rows == 0 || y.cols == 0) return true;
  if (x.at + (x.rows - 1) * x.ld + x.cols <= y.at || y.at + (y.rows - 1) * y.ld + y.cols <= x.at) return true;
  if (x.ld != y.ld) return false;
  const int64_t off = ((y.at - x.at) % x.ld + x.ld) % x.ld;  // where b's columns start in a's rows
  return off >= x.cols && off + y.cols <= x.ld;
}

void gelu_mul_backward(const ladder::Tensor& dh, const ladder::Tensor& g, const ladder::Tensor& u,
                       const ladder::Tensor& dg, const ladder::Tensor& du) {
  ladder::OpRange range("ladder::gelu_mul_backward", {&dh, &g, &u});  // ours: aten has no such op
  const int64_t cols = dh.dim() == 0 ? 1 : dh.size(-1), rows = cols == 0 ? 0 : dh.numel() / cols;
  ladder::require_flat(ladder::DType::BF16, "gelu_mul_backward", "gradient", dh, dh.numel());
  ladder::require_flat(ladder::DType::BF16, "gelu_mul_backward", "g", g, dh.numel());
  ladder::require_flat(ladder::DType::BF16, "gelu_mul_backward", "u", u, dh.numel());
  for (const auto& [name, t] : {std::pair{"dg", &dg}, {"du", &du}}) {
    const bool ok = t->dtype == ladder::DType::BF16 && t->dim() == 2 && t->size(0) == rows && t->size(1) == cols &&
                    t->stride(1) == 1 && t->stride(0) >= cols;
    if (!ok)
      throw ladder::Error(std::string("gelu_mul_backward: ") + name + " must be a bf16 [" + std::to_string(rows) +
                          ", " + std::to_string(cols) + "] view with unit column stride, got " +
                          ladder::dtype_name(t->dtype) + " " + ladder::shape_str(t->shape));
  }
  if (dg.stride(0) != du.stride(0)) throw ladder::Error("gelu_mul_backward: dg and du must have the same row stride");
  bool apart = views_disjoint(dg, du);
  for (const ladder::Tensor* in : {&dh, &g, &u}) apart = apart && views_disjoint(dg, *in) && views_disjoint(du, *in);
  if (!apart) throw ladder::Error("gelu_mul_backward: the outputs must not overlap each other or the inputs");
  launch_gelu_mul_backward(dh.ptr<bf16>(), g.ptr<bf16>(), u.ptr<bf16>(), dg.ptr<bf16>(), du.ptr<bf16>(), rows, cols,
                           cols, dg.stride(0), ladder::current_stream());
}

}  // namespace ch06
