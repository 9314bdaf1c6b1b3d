// Chapter 05: chapters 03's and 04's kernels as PyTorch operators, torch.ops.ladder.gelu_mul and
// torch.ops.ladder.geglu_gemm. Host code only: the kernels are the chapters' own, built with the project's flags and
// linked in (CMakeLists.txt); this file only tells PyTorch how to call them. The op library is the ladder's: a later
// chapter adds its own ops to it (06_train_mlp/torch_ops.cpp: the backward ops the autograd formulas of gelu_mul and
// geglu_gemm call, and the whole MLP as one op), with TORCH_LIBRARY_FRAGMENT and the helpers of torch_op.h.
//
// An operator is three things, and this file holds two of them:
//   1. a schema (TORCH_LIBRARY below): the op's name, argument types and result, which is also the name torch.profiler
//      writes on the CPU lane of a trace (`ladder::geglu_gemm`, a cpu_op like `aten::mm`);
//   2. a kernel per dispatch key (TORCH_LIBRARY_IMPL(ladder, CUDA, ...)): the function PyTorch's dispatcher calls when
//      the arguments are CUDA tensors (the dispatcher reads the key from the tensors, so the op itself has no `if`);
//   3. a fake (meta) kernel that only computes the result's shape, for torch.compile: ladder_ops/__init__.py.
//
// The rules every kernel below follows, and why:
//   - launch on torch's current stream (at::cuda::getCurrentCUDAStream), never on stream 0: the caller may be inside
//     `with torch.cuda.stream(s)`, torch.compile, or a CUDA graph capture, and a kernel on another stream would run
//     unordered with the ops around it (a capture would not even record it);
//   - allocate the result with at::empty: torch's caching allocator, which a graph capture knows how to replay;
//   - make the tensors' device current (CUDAGuard) before touching the GPU, so a tensor on cuda:1 runs on cuda:1;
//   - refuse bad input with an exception (TORCH_CHECK raises RuntimeError in Python), never exit(): the process is
//     the user's. The chapters' launchers throw ladder::Error; it is rethrown as the same one-line RuntimeError.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "03_fused_mlp/kernels.cuh"
#include "04_epilogue_mlp/kernels.cuh"
#include "05_torch_op/torch_op.h"
#include "base/error.h"

namespace {

using ch05::bf16_ptr;
using ch05::check_input;
using ch05::run_launcher;

// out = gelu_tanh(g) * u, elementwise (chapter 03's kernel, its default variant "vec").
at::Tensor gelu_mul(const at::Tensor& g, const at::Tensor& u) {
  constexpr const char* op = "ladder::gelu_mul";
  check_input(op, "g", g, g.device());
  check_input(op, "u", u, g.device());
  TORCH_CHECK(g.sizes() == u.sizes(), op, ": g and u must have the same shape, got ", g.sizes(), " and ", u.sizes());
  const c10::cuda::CUDAGuard guard(g.device());
  at::Tensor out = at::empty(g.sizes(), g.options());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  run_launcher(op, [&] {
    ch03::find_gelu_mul_variant("vec").launch(bf16_ptr(g), bf16_ptr(u),
                                              reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()),
                                              g.numel(), stream);
  });
  return out;
}

// The variant a call runs: `name`, or when it is empty the chapter's default for a GPU of compute capability
// major.minor. An unknown name is refused here with the list of names.
const ch04::GegluGemmVariant& geglu_gemm_variant(const char* op, const std::string& name, int major, int minor) {
  const std::string chosen = name.empty() ? ch04::geglu_gemm_default_variant(major, minor) : name;
  const auto& list = ch04::geglu_gemm_variants();
  const auto v = std::find_if(list.begin(), list.end(), [&](const auto& v) { return chosen == v.name; });
  TORCH_CHECK(v != list.end(), op, ": no variant named '", chosen, "' (have: ", ladder::variant_names(list), ")");
  return *v;
}

}  // namespace

// m = gelu_tanh(x @ w_gate^T) * (x @ w_up^T) in one GEMM (chapter 04): x [..., dim], w_gate and w_up [hidden, dim]
// as nn.Linear stores its weight, m [..., hidden]. In namespace ch05 (torch_op.h): 06's whole-MLP op runs it too.
at::Tensor ch05::geglu_gemm(const at::Tensor& x, const at::Tensor& w_gate, const at::Tensor& w_up,
                            c10::string_view variant_name) {
  constexpr const char* op = "ladder::geglu_gemm";
  check_input(op, "x", x, x.device());
  check_input(op, "w_gate", w_gate, x.device());
  check_input(op, "w_up", w_up, x.device());
  TORCH_CHECK(x.dim() >= 1, op, ": x must have at least one dimension (its last is dim)");
  TORCH_CHECK(w_gate.dim() == 2 && w_gate.size(1) == x.size(-1) && w_up.sizes() == w_gate.sizes(), op,
              ": w_gate and w_up must both be [hidden, dim] with dim = x.size(-1) = ", x.size(-1), ", got ",
              w_gate.sizes(), " and ", w_up.sizes());
  const int64_t dim = x.size(-1), hidden = w_gate.size(0);
  int64_t M = 1;  // x's leading sizes multiplied: [batch, seq, dim] is batch * seq rows (also when dim is 0)
  for (int64_t d = 0; d + 1 < x.dim(); ++d) M *= x.size(d);
  const std::string rule = ch04::geglu_gemm_shape_rule(dim, hidden);
  TORCH_CHECK(rule.empty(), op, ": ", rule);

  const c10::cuda::CUDAGuard guard(x.device());
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(x.device().index());  // cached by torch: no driver call
  const ch04::GegluGemmVariant& v = geglu_gemm_variant(op, std::string(variant_name), p->major, p->minor);
  const std::string why = ch04::geglu_gemm_cannot_run(v.name, p->major, p->minor);
  TORCH_CHECK(why.empty(), op, ": variant '", v.name, "': ", why);

  std::vector<int64_t> m_sizes = x.sizes().vec();
  m_sizes.back() = hidden;
  at::Tensor m = at::empty(m_sizes, x.options());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  run_launcher(op, [&] {
    v.launch(bf16_ptr(x), bf16_ptr(w_gate), bf16_ptr(w_up),
             reinterpret_cast<__nv_bfloat16*>(m.data_ptr<at::BFloat16>()), M, dim, hidden, stream);
  });
  return m;
}

namespace {

// For Python, which must pick a path before it calls anything (ladder_ops.LadderGEGLUMLP): the variant names in the
// chapter's order, and why `variant` ("" = the default) cannot run on a GPU of compute capability major.minor (empty
// when it can). No tensors, so no dispatch key: one kernel for every backend.
std::vector<std::string> geglu_gemm_variants() {
  std::vector<std::string> names;
  for (const auto& v : ch04::geglu_gemm_variants()) names.emplace_back(v.name);
  return names;
}

std::string geglu_gemm_cannot_run(c10::string_view variant, int64_t major, int64_t minor) {
  const ch04::GegluGemmVariant& v =
      geglu_gemm_variant("ladder::geglu_gemm_cannot_run", std::string(variant), int(major), int(minor));
  return ch04::geglu_gemm_cannot_run(v.name, int(major), int(minor));
}

}  // namespace

TORCH_LIBRARY(ladder, m) {
  m.def("gelu_mul(Tensor g, Tensor u) -> Tensor");
  m.def("geglu_gemm(Tensor x, Tensor w_gate, Tensor w_up, *, str variant=\"\") -> Tensor");
  m.def("geglu_gemm_variants() -> str[]", &geglu_gemm_variants);
  m.def("geglu_gemm_cannot_run(str variant, int major, int minor) -> str", &geglu_gemm_cannot_run);
}

TORCH_LIBRARY_IMPL(ladder, CUDA, m) {
  m.impl("gelu_mul", &gelu_mul);
  m.impl("geglu_gemm", &ch05::geglu_gemm);
}

// The same functions for CPU tensors, where their first check refuses them: the reader gets our one line ("x must be
// a CUDA tensor") instead of the dispatcher's list of the backends that have a kernel.
TORCH_LIBRARY_IMPL(ladder, CPU, m) {
  m.impl("gelu_mul", &gelu_mul);
  m.impl("geglu_gemm", &ch05::geglu_gemm);
}

// gelu_mul and geglu_gemm have autograd formulas, registered from Python (torch.library.register_autograd in
// ladder_ops/__init__.py); their backward runs 06's ops (06_train_mlp/torch_ops.cpp, in this same library).
