// What the files of the op library share: 05's torch_ops.cpp, and the later chapters' that add their ops to it
// (06_train_mlp/torch_ops.cpp). The checks on an input tensor, the call of a chapter's launcher (its ladder::Error
// becomes PyTorch's RuntimeError), and 04's GEMM as a tensor function, which 06's whole-MLP ops run.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/string_view.h>
#include <cuda_bf16.h>

#include "base/error.h"

namespace ch05 {

inline const __nv_bfloat16* bf16_ptr(const at::Tensor& t) {
  return reinterpret_cast<const __nv_bfloat16*>(t.data_ptr<at::BFloat16>());
}

// bf16, on `device` (a CUDA device), contiguous: what the chapters' kernels walk as a flat row-major array.
inline void check_input(const char* op, const char* name, const at::Tensor& t, const at::Device& device) {
  TORCH_CHECK(t.is_cuda(), op, ": ", name, " must be a CUDA tensor, got one on ", t.device());
  TORCH_CHECK(t.device() == device, op, ": ", name, " is on ", t.device(), " but the first input is on ", device);
  TORCH_CHECK(t.scalar_type() == at::kBFloat16, op, ": ", name, " must be bfloat16, got ", t.scalar_type());
  TORCH_CHECK(t.is_contiguous(), op, ": ", name, " must be contiguous (call .contiguous() first)");
}

// Runs a chapter's launcher; its ladder::Error (a shape rule, an alignment, a GPU it cannot run on, a CUDA error)
// becomes a RuntimeError with the same message.
template <class Launch>
void run_launcher(const char* op, Launch&& launch) {
  try {
    launch();
  } catch (const ladder::Error& e) {
    TORCH_CHECK(false, op, ": ", e.what());
  }
}

// m = gelu_tanh(x @ w_gate^T) * (x @ w_up^T) in one GEMM (chapter 04), as torch.ops.ladder.geglu_gemm runs it
// (torch_ops.cpp). `variant_name` "" is the GPU's default.
at::Tensor geglu_gemm(const at::Tensor& x, const at::Tensor& w_gate, const at::Tensor& w_up,
                      c10::string_view variant_name);

}  // namespace ch05
