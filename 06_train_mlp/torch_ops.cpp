// Chapter 06's kernels as PyTorch operators, added to chapter 05's op library (06's CMakeLists.txt compiles this file
// into it when -DLADDER_TORCH=ON): torch.ops.ladder.gelu_mul_backward, which the autograd formulas of gelu_mul and
// geglu_gemm (05_torch_op/ladder_ops/__init__.py) call, torch.ops.ladder.geglu_gemm_keep, the gated GEMM also keeping g
// and u, torch.ops.ladder.dgated_gemm, the backward GEMM with gelu_mul's backward in its epilogue, and the whole MLP as
// one op (geglu_mlp_keep, geglu_mlp), whose backward, geglu_mlp_backward, runs it and the gradients' GEMMs. Host code
// only, as 05_torch_op/torch_ops.cpp, whose header says what an operator is and the rules every kernel below follows;
// TORCH_LIBRARY_FRAGMENT adds these schemas to the `ladder` library that file defines.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <array>
#include <climits>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "05_torch_op/torch_op.h"
#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/kernels.cuh"

namespace {

using ch05::bf16_ptr;
using ch05::check_input;
using ch05::run_launcher;

// The backward of out = gelu_tanh(g) * u (chapter 06's kernel): dg = bf16(bf16(dh * u) * gelu'(g)) and
// du = bf16(dh * bf16(gelu(g))), the roundings eager autograd makes. Returns (dg, du), new tensors shaped like dh.
std::tuple<at::Tensor, at::Tensor> gelu_mul_backward(const at::Tensor& dh, const at::Tensor& g, const at::Tensor& u) {
  constexpr const char* op = "ladder::gelu_mul_backward";
  check_input(op, "dh", dh, dh.device());
  check_input(op, "g", g, dh.device());
  check_input(op, "u", u, dh.device());
  TORCH_CHECK(g.sizes() == dh.sizes() && u.sizes() == dh.sizes(), op, ": dh, g and u must have the same shape, got ",
              dh.sizes(), ", ", g.sizes(), " and ", u.sizes());
  const c10::cuda::CUDAGuard guard(dh.device());
  at::Tensor dg = at::empty(dh.sizes(), dh.options()), du = at::empty(dh.sizes(), dh.options());
  const int64_t cols = dh.dim() == 0 ? 1 : dh.size(-1), rows = cols == 0 ? 0 : dh.numel() / cols;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  run_launcher(op, [&] {
    ch06::launch_gelu_mul_backward(bf16_ptr(dh), bf16_ptr(g), bf16_ptr(u),
                                   reinterpret_cast<__nv_bfloat16*>(dg.data_ptr<at::BFloat16>()),
                                   reinterpret_cast<__nv_bfloat16*>(du.data_ptr<at::BFloat16>()), rows, cols, cols,
                                   cols, stream);
  });
  return {dg, du};
}

// The training forward of chapter 06's epilogue mode: m as geglu_gemm's `fast` computes it, and g = x @ w_gate^T,
// u = x @ w_up^T (bf16) from the same kernel, for the backward (Hopper only: ch06::dgated_gemm_cannot_run says why
// not elsewhere). Returns (m, g, u), each [..., hidden].
std::tuple<at::Tensor, at::Tensor, at::Tensor> geglu_gemm_keep(const at::Tensor& x, const at::Tensor& w_gate,
                                                               const at::Tensor& w_up) {
  constexpr const char* op = "ladder::geglu_gemm_keep";
  check_input(op, "x", x, x.device());
  check_input(op, "w_gate", w_gate, x.device());
  check_input(op, "w_up", w_up, x.device());
  TORCH_CHECK(x.dim() >= 1 && w_gate.dim() == 2 && w_gate.size(1) == x.size(-1) && w_up.sizes() == w_gate.sizes(), op,
              ": w_gate and w_up must both be [hidden, dim] with dim = x.size(-1), got ", w_gate.sizes(), " and ",
              w_up.sizes());
  const int64_t dim = x.size(-1), hidden = w_gate.size(0), M = dim == 0 ? 0 : x.numel() / dim;
  const c10::cuda::CUDAGuard guard(x.device());
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(x.device().index());
  const std::string why = ch06::dgated_gemm_cannot_run(p->major, p->minor, dim, hidden);
  TORCH_CHECK(why.empty() && dim > 0, op, ": ", why.empty() ? "dim must be > 0" : why);
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.back() = hidden;
  at::Tensor m = at::empty(sizes, x.options()), g = at::empty(sizes, x.options()), u = at::empty(sizes, x.options());
  auto out = [](at::Tensor& t) { return reinterpret_cast<__nv_bfloat16*>(t.data_ptr<at::BFloat16>()); };
  run_launcher(op, [&] {
#if LADDER_HAVE_SM90A
    ch06::launch_geglu_gemm_keep(bf16_ptr(x), bf16_ptr(w_gate), bf16_ptr(w_up), out(m), out(g), out(u), M, dim,
                                 hidden, at::cuda::getCurrentCUDAStream());
#endif
  });
  return {m, g, u};
}

// The epilogue mode's backward GEMM (chapter 06): dh = dy @ w_down stays on chip, and its epilogue runs the backward
// of m = gelu_tanh(g) * u: returns ([dg | du], m), dg and du side by side in one [..., 2 hidden] tensor (so that the
// two weights' gradients are one GEMM, as in chapter 06), and m made again for down_proj's weight gradient.
// dy [..., dim], w_down [dim, hidden] as nn.Linear stores it (the kernel reads it so), g and u [..., hidden]. Hopper
// only, as geglu_gemm_keep. Its errors name op: the op the caller called (geglu_mlp_backward runs it too).
std::tuple<at::Tensor, at::Tensor> dgated_gemm_for(const char* op, const at::Tensor& dy, const at::Tensor& w_down,
                                                   const at::Tensor& g, const at::Tensor& u) {
  check_input(op, "dy", dy, dy.device());
  check_input(op, "w_down", w_down, dy.device());
  check_input(op, "g", g, dy.device());
  check_input(op, "u", u, dy.device());
  TORCH_CHECK(dy.dim() >= 1 && w_down.dim() == 2 && w_down.size(0) == dy.size(-1), op,
              ": w_down must be [dim, hidden] with dim = dy.size(-1), got ", w_down.sizes(), " for dy ", dy.sizes());
  const int64_t dim = w_down.size(0), hidden = w_down.size(1), M = dim == 0 ? 0 : dy.numel() / dim;
  std::vector<int64_t> sizes = dy.sizes().vec();
  sizes.back() = hidden;
  TORCH_CHECK(g.sizes().equals(sizes) && u.sizes().equals(sizes), op, ": g and u must be ", at::IntArrayRef(sizes),
              " (dy's leading sizes, then hidden), got ", g.sizes(), " and ", u.sizes());
  const c10::cuda::CUDAGuard guard(dy.device());
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(dy.device().index());
  const std::string why = ch06::dgated_gemm_cannot_run(p->major, p->minor, dim, hidden);
  TORCH_CHECK(why.empty() && dim > 0, op, ": ", why.empty() ? "dim must be > 0" : why);
  TORCH_CHECK(M < INT_MAX && hidden < INT_MAX && (M + 127) / 128 * ((hidden + 127) / 128) < INT_MAX, op,
              ": rows / 128 x hidden / 128 tiles must be < 2^31 (the kernel numbers them with 32-bit integers)");
  for (const at::Tensor* t : {&dy, &w_down, &g, &u})  // a view into a larger tensor may start anywhere
    TORCH_CHECK(reinterpret_cast<uintptr_t>(t->data_ptr()) % 16 == 0, op,
                ": every tensor must start at a 16-byte aligned address (TMA's rule)");
  at::Tensor m = at::empty(sizes, dy.options());
  sizes.back() = 2 * hidden;
  at::Tensor dgu = at::empty(sizes, dy.options());
  auto out = [](at::Tensor& t) { return reinterpret_cast<__nv_bfloat16*>(t.data_ptr<at::BFloat16>()); };
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  run_launcher(op, [&] {
#if LADDER_HAVE_SM90A
    ch06::launch_dgated_gemm(bf16_ptr(dy), bf16_ptr(w_down), bf16_ptr(g), bf16_ptr(u), hidden, out(dgu),
                             out(dgu) + hidden, 2 * hidden, out(m), M, dim, hidden, stream);
#endif
  });
  return {dgu, m};
}

std::tuple<at::Tensor, at::Tensor> dgated_gemm(const at::Tensor& dy, const at::Tensor& w_down, const at::Tensor& g,
                                               const at::Tensor& u) {
  return dgated_gemm_for("ladder::dgated_gemm", dy, w_down, g, u);
}

// The whole MLP's forward as one op, y = down(gelu_tanh(x @ w_gate^T) * (x @ w_up^T)), so that its backward receives
// dy itself and can run dgated_gemm (dh never stored); m is not kept. geglu_mlp_keep also returns g and u for that
// backward (geglu_gemm_keep's kernel); geglu_mlp keeps nothing and its backward replays them.
void check_down(const char* op, const at::Tensor& x, const at::Tensor& w_gate, const at::Tensor& w_down) {
  check_input(op, "x", x, x.device());
  check_input(op, "w_down", w_down, x.device());
  TORCH_CHECK(w_gate.dim() == 2 && w_down.dim() == 2 && w_down.size(0) == w_gate.size(1) &&
                  w_down.size(1) == w_gate.size(0),
              op, ": w_down must be [dim, hidden] for w_gate [hidden, dim], got ", w_down.sizes(), " for ",
              w_gate.sizes());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> geglu_mlp_keep(const at::Tensor& x, const at::Tensor& w_gate,
                                                              const at::Tensor& w_up, const at::Tensor& w_down) {
  check_down("ladder::geglu_mlp_keep", x, w_gate, w_down);
  auto [m, g, u] = geglu_gemm_keep(x, w_gate, w_up);
  return {at::linear(m, w_down), g, u};
}

at::Tensor geglu_mlp(const at::Tensor& x, const at::Tensor& w_gate, const at::Tensor& w_up, const at::Tensor& w_down) {
  check_down("ladder::geglu_mlp", x, w_gate, w_down);
  return at::linear(ch05::geglu_gemm(x, w_gate, w_up, ""), w_down);
}

// Whether w_up's rows follow w_gate's in one buffer, as LadderGEGLUMLP keeps them: then [w_gate; w_up] is one tensor,
// a view over both, and dx needs one GEMM.
bool halves_of_one_buffer(const at::Tensor& w_gate, const at::Tensor& w_up) {
  return w_gate.sizes() == w_up.sizes() && w_gate.is_contiguous() && w_up.is_contiguous() &&
         w_gate.storage().is_alias_of(w_up.storage()) &&
         w_up.storage_offset() == w_gate.storage_offset() + w_gate.numel();
}

// The backward of geglu_mlp_keep and geglu_mlp, from dy and the kept g and u: dgated_gemm ([dg | du] and m, dh kept on
// chip), dW_down = dy^T @ m, dx = [dg | du] @ [w_gate; w_up] and [dW_gate; dW_up] = [dg | du]^T @ x. One op, so its
// kernels are launched back to back from here: with Python between them, PyTorch's step left the GPU idle before each,
// and they ran slower (05_torch_op/README.md). dx is one GEMM when the two weights are the
// halves of one buffer, else two, the second adding into the first. output_mask says which of dx, [dW_gate; dW_up]
// and dW_down autograd needs; the others come back empty, and their GEMMs are not run.
std::tuple<at::Tensor, at::Tensor, at::Tensor> geglu_mlp_backward(const at::Tensor& dy, const at::Tensor& x,
                                                                  const at::Tensor& w_gate, const at::Tensor& w_up,
                                                                  const at::Tensor& w_down, const at::Tensor& g,
                                                                  const at::Tensor& u, std::array<bool, 3> output_mask) {
  constexpr const char* op = "ladder::geglu_mlp_backward";
  check_down(op, x, w_gate, w_down);
  check_input(op, "w_gate", w_gate, x.device());
  check_input(op, "w_up", w_up, x.device());
  TORCH_CHECK(w_up.sizes() == w_gate.sizes() && dy.sizes() == x.sizes(), op,
              ": w_up must be shaped as w_gate and dy as x, got ", w_up.sizes(), " for ", w_gate.sizes(), " and ",
              dy.sizes(), " for ", x.sizes());
  const c10::cuda::CUDAGuard guard(x.device());
  const int64_t hidden = w_gate.size(0), dim = w_gate.size(1);
  auto [dgu, m] = dgated_gemm_for(op, dy, w_down, g, u);
  const at::Tensor x2 = x.reshape({-1, dim}), dgu2 = dgu.reshape({-1, 2 * hidden});
  const at::Tensor none = at::empty({0}, x.options());
  at::Tensor d_down = output_mask[2] ? at::mm(dy.reshape({-1, dim}).t(), m.reshape({-1, hidden})) : none;
  m.reset();  // freed before the next GEMMs, as autograd frees it after down's node
  at::Tensor dx = none;
  if (output_mask[0] && halves_of_one_buffer(w_gate, w_up)) {
    dx = at::mm(dgu2, w_gate.as_strided({2 * hidden, dim}, {dim, 1})).view(x.sizes());
  } else if (output_mask[0]) {
    dx = at::mm(dgu2.narrow(1, 0, hidden), w_gate).addmm_(dgu2.narrow(1, hidden, hidden), w_up).view(x.sizes());
  }
  at::Tensor d_gate_up = output_mask[1] ? at::mm(dgu2.t(), x2) : none;
  return {dx, d_gate_up, d_down};
}

std::string geglu_gemm_keep_cannot_run(int64_t major, int64_t minor) {
  return ch06::dgated_gemm_cannot_run(int(major), int(minor), 8, 8);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ladder, m) {
  m.def("gelu_mul_backward(Tensor dh, Tensor g, Tensor u) -> (Tensor, Tensor)");
  m.def("geglu_gemm_keep(Tensor x, Tensor w_gate, Tensor w_up) -> (Tensor, Tensor, Tensor)");
  m.def("geglu_gemm_keep_cannot_run(int major, int minor) -> str", &geglu_gemm_keep_cannot_run);
  m.def("dgated_gemm(Tensor dy, Tensor w_down, Tensor g, Tensor u) -> (Tensor, Tensor)");
  m.def("geglu_mlp_keep(Tensor x, Tensor w_gate, Tensor w_up, Tensor w_down) -> (Tensor, Tensor, Tensor)");
  m.def("geglu_mlp(Tensor x, Tensor w_gate, Tensor w_up, Tensor w_down) -> Tensor");
  m.def("geglu_mlp_backward(Tensor dy, Tensor x, Tensor w_gate, Tensor w_up, Tensor w_down, Tensor g, Tensor u, "
        "bool[3] output_mask) -> (Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(ladder, CUDA, m) {
  m.impl("gelu_mul_backward", &gelu_mul_backward);
  m.impl("geglu_gemm_keep", &geglu_gemm_keep);
  m.impl("dgated_gemm", &dgated_gemm);
  m.impl("geglu_mlp_keep", &geglu_mlp_keep);
  m.impl("geglu_mlp", &geglu_mlp);
  m.impl("geglu_mlp_backward", &geglu_mlp_backward);
}

// The same functions for CPU tensors, where their first check refuses them (as 05's ops).
TORCH_LIBRARY_IMPL(ladder, CPU, m) {
  m.impl("gelu_mul_backward", &gelu_mul_backward);
  m.impl("geglu_gemm_keep", &geglu_gemm_keep);
  m.impl("dgated_gemm", &dgated_gemm);
  m.impl("geglu_mlp_keep", &geglu_mlp_keep);
  m.impl("geglu_mlp", &geglu_mlp);
  m.impl("geglu_mlp_backward", &geglu_mlp_backward);
}

// The backward ops themselves have no autograd formula (no double backward): a backward through one raises
// "derivative for ladder::gelu_mul_backward is not implemented" instead of leaving its inputs silently without one.
TORCH_LIBRARY_IMPL(ladder, Autograd, m) {
  m.impl("gelu_mul_backward", torch::autograd::autogradNotImplementedFallback());
  m.impl("dgated_gemm", torch::autograd::autogradNotImplementedFallback());
  m.impl("geglu_mlp_backward", torch::autograd::autogradNotImplementedFallback());
}
