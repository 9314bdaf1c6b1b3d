// See mlp.h. The eager backward is written in the order PyTorch's autograd engine runs it for this graph: it takes
// the ready node with the highest sequence number first, so the down Linear, then mul, then gelu (created after up's
// nodes in the forward), then up's Linear, then gate's. Each node is two ranges, as in torch's trace:
// "autograd::engine::evaluate_function: <Node>" around "<Node>", with the aten ops it calls inside. What each node
// computes follows derivatives.yaml: MmBackward0 of out = mat1 @ mat2 gives mat1's gradient as grad @ mat2^T and, since
// mat2 = W^T is column-major, mat2's as (grad^T @ mat1)^T, whose TBackward0 transposes it back into dW with no copy.
#include "06_train_mlp/mlp.h"

#include <cuda_runtime.h>

#include "03_fused_mlp/kernels.cuh"
#include "03_simple_mlp/kernels.cuh"
#include "04_epilogue_mlp/kernels.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/kernels.cuh"
#include "base/error.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "hopper/launch.h"  // current_device
#include "profiler/profiler.h"

namespace ch06 {

using ladder::Range;
using ladder::Tensor;
namespace ops = ladder::ops;

Mode parse_mode(const std::string& name) {
  if (name == "eager") return Mode::Eager;
  if (name == "fused") return Mode::Fused;
  if (name == "epilogue") return Mode::Epilogue;
  if (name == "recompute") return Mode::Recompute;
  throw ladder::UsageError("--mode: unknown mode '" + name + "'; the modes are eager, fused, epilogue and recompute");
}

std::string mode_name(Mode mode) {
  switch (mode) {
    case Mode::Eager:
      return "eager";
    case Mode::Fused:
      return "fused";
    case Mode::Epilogue:
      return "epilogue";
    case Mode::Recompute:
      break;
  }
  return "recompute";
}

std::string mode_cannot_run(Mode mode, int64_t dim, int64_t hidden, int major, int minor) {
  std::string why;
  if (mode == Mode::Recompute) why = ch04::geglu_gemm_shape_rule(dim, hidden);
  if (mode == Mode::Epilogue)  // before the GPU is known, the size rule alone
    why = major < 0 ? dgated_gemm_shape_rule(dim, hidden) : dgated_gemm_cannot_run(major, minor, dim, hidden);
  return why.empty() ? "" : "--mode " + mode_name(mode) + ": " + why;
}

namespace {

// Rows [first, first + count) of a contiguous 2-D tensor: a contiguous view sharing its storage.
Tensor rows_of(const Tensor& t, int64_t first, int64_t count) {
  Tensor v = t;
  v.data = t.ptr<char>() + first * t.size(1) * ladder::dtype_size(t.dtype);
  v.shape = {count, t.size(1)};
  return v;
}

// Columns [first, first + count) of a contiguous 2-D tensor: a view whose rows keep the full row stride.
Tensor cols_of(const Tensor& t, int64_t first, int64_t count) {
  Tensor v = t;
  v.data = t.ptr<char>() + first * ladder::dtype_size(t.dtype);
  v.shape = {t.size(0), count};
  return v;
}

// One node of the autograd graph as torch's trace shows it.
struct Node {
  Range outer, inner;
  explicit Node(const std::string& name)
      : outer("autograd::engine::evaluate_function: " + name, ladder::Cat::CpuOp), inner(name, ladder::Cat::CpuOp) {}
};

void accumulate_grad() {  // the first gradient of a leaf is stored as it is: no kernel
  Node n("torch::autograd::AccumulateGrad");
}

void fnv(uint64_t& h, const std::vector<uint16_t>& bits) {
  for (uint16_t b : bits) {
    for (int k = 0; k < 2; ++k) {
      h ^= (b >> (8 * k)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
}

std::vector<uint16_t> host_bits(const Tensor& t) {  // a bf16 [rows, cols] view with unit column stride
  std::vector<uint16_t> bits(static_cast<size_t>(t.size(0) * t.size(1)));
  if (bits.empty()) return bits;
  CUDA_CHECK(cudaMemcpy2D(bits.data(), t.size(1) * 2, t.data, t.stride(0) * 2, t.size(1) * 2, t.size(0),
                          cudaMemcpyDeviceToHost));
  return bits;
}

}  // namespace

Tensor Params::w_gate() const { return rows_of(w_gate_up, 0, w_gate_up.size(0) / 2); }
Tensor Params::w_up() const { return rows_of(w_gate_up, w_gate_up.size(0) / 2, w_gate_up.size(0) / 2); }
Tensor Grads::dw_gate() const { return rows_of(dw_gate_up, 0, dw_gate_up.size(0) / 2); }
Tensor Grads::dw_up() const { return rows_of(dw_gate_up, dw_gate_up.size(0) / 2, dw_gate_up.size(0) / 2); }

Grads grads_like(const Params& p) {
  return {ladder::empty(p.x.shape, p.x.dtype), ladder::empty(p.w_gate_up.shape, p.w_gate_up.dtype),
          ladder::empty(p.w_down.shape, p.w_down.dtype)};
}

TrainStep::TrainStep(Mode mode, const Params& params, const Grads& grads)
    : mode_(mode), p_(params), d_(grads), dim_(params.x.size(-1)), hidden_(params.w_down.size(1)) {
  rows_ = p_.x.numel() / dim_;
  const hopper::DeviceInfo& gpu = hopper::current_device();
  dgated_ = mode_ == Mode::Epilogue ||
            (mode_ == Mode::Recompute && dgated_gemm_cannot_run(gpu.major, gpu.minor, dim_, hidden_).empty());
}

void TrainStep::forward() {
  const auto dt = ladder::DType::BF16;
  // The Linears take x as [batch, seq, dim] (aten::linear folds the leading dims into rows) and write [rows, hidden].
  const ladder::Shape shape3 = {p_.x.size(0), p_.x.size(1), hidden_};
  if (mode_ == Mode::Recompute) {
    h_ = ladder::empty({rows_, hidden_}, dt);
    ch04::geglu_gemm(p_.x, p_.w_gate(), p_.w_up(), h_);  // g and u never leave the chip
    y_ = ladder::empty(p_.x.shape, dt);
    ops::linear(h_.reshape(shape3), p_.w_down, nullptr, y_);
    h_ = {};  // not kept: the backward makes it again
    return;
  }
  if (mode_ == Mode::Epilogue) {  // one gated GEMM, also keeping g and u for the backward GEMM's epilogue
    g_ = ladder::empty({rows_, hidden_}, dt);
    u_ = ladder::empty({rows_, hidden_}, dt);
    h_ = ladder::empty({rows_, hidden_}, dt);
    geglu_gemm_keep(p_.x, p_.w_gate(), p_.w_up(), h_, g_, u_);
    y_ = ladder::empty(p_.x.shape, dt);
    ops::linear(h_.reshape(shape3), p_.w_down, nullptr, y_);
    h_ = {};  // not kept: the backward GEMM's epilogue makes it again
    return;
  }
  g_ = ladder::empty({rows_, hidden_}, dt);
  ops::linear(p_.x, p_.w_gate(), nullptr, g_.reshape(shape3));
  u_ = ladder::empty({rows_, hidden_}, dt);
  ops::linear(p_.x, p_.w_up(), nullptr, u_.reshape(shape3));
  h_ = ladder::empty({rows_, hidden_}, dt);
  if (mode_ == Mode::Eager) {
    a_ = ladder::empty({rows_, hidden_}, dt);
    ch03::gelu(g_, a_);  // a = gelu(g), kept for MulBackward0
    ch03::mul(a_, u_, h_);
  } else {
    ch03::gelu_mul(g_, u_, h_);  // gelu(g) never stored: the backward recomputes it
  }
  y_ = ladder::empty(p_.x.shape, dt);
  ops::linear(h_.reshape(shape3), p_.w_down, nullptr, y_);
}

// The backward, node by node as autograd runs it, in stages named for what they do. Each stage frees what autograd
// frees after the node that used it last, so the allocator's curve has PyTorch's shape.
void TrainStep::backward() {
  const Tensor dy2 = dy_rows();
  if (mode_ == Mode::Recompute) replay_g_u();
  if (dgated_) {  // epilogue, and recompute where dgated_gemm runs
    dgated_backward(dy2);
  } else {
    down_backward(dy2);
    if (mode_ == Mode::Eager) {
      eager_down_views();
      eager_gelu_mul_backward();
      eager_gate_up_backward();
    } else {  // fused, and recompute without dgated_gemm
      fused_gelu_mul_backward();
      stacked_gate_up_backward();
    }
  }
  y_ = {};
}

Tensor TrainStep::x_rows() const { return p_.x.reshape({rows_, dim_}); }

// y's gradient as [rows, dim]: the view aten::linear made of its 3-D output, undone.
Tensor TrainStep::dy_rows() {
  Node n("UnsafeViewBackward0");
  return ops::reshape(p_.dy, {rows_, dim_});
}

// Recompute: the forward kept only x, so g and u again, before the first node that needs them. Where dgated_gemm
// runs, as one GEMM of the stacked weight, [g | u] = x @ [W_gate; W_up]^T, and then the backward is epilogue's (its
// kernel makes h); elsewhere as two GEMMs and gelu_mul for h, and then fused's backward.
void TrainStep::replay_g_u() {
  const auto dt = ladder::DType::BF16;
  const Tensor x2 = x_rows();
  Node n("GegluGemmBackward");
  if (dgated_) {
    gu_ = ladder::empty({rows_, 2 * hidden_}, dt);
    ops::mm(x2, ops::t(p_.w_gate_up), gu_);
    g_ = cols_of(gu_, 0, hidden_);
    u_ = cols_of(gu_, hidden_, hidden_);
  } else {
    g_ = ladder::empty({rows_, hidden_}, dt);
    ops::mm(x2, ops::t(p_.w_gate()), g_);
    u_ = ladder::empty({rows_, hidden_}, dt);
    ops::mm(x2, ops::t(p_.w_up()), u_);
    h_ = ladder::empty({rows_, hidden_}, dt);
    ch03::gelu_mul(g_, u_, h_);
  }
}

// Epilogue (and recompute on Hopper): down's dgrad and the gelu_mul backward in one kernel, then down's weight
// gradient from the h that kernel made, then gate and up as one Linear.
void TrainStep::dgated_backward(const Tensor& dy2) {
  const auto dt = ladder::DType::BF16;
  {
    // down's dgrad and the gelu_mul backward in one kernel: dh stays on chip; dg, du and h come out.
    Node n("DgatedGemmBackward");
    dgu_ = ladder::empty({rows_, 2 * hidden_}, dt);
    dg_ = cols_of(dgu_, 0, hidden_);
    du_ = cols_of(dgu_, hidden_, hidden_);
    h_ = ladder::empty({rows_, hidden_}, dt);
    dgated_gemm(dy2, p_.w_down, g_, u_, dg_, du_, h_);
  }
  g_ = u_ = gu_ = {};
  {
    Node n("MmBackward0");  // down's weight gradient, from the h the epilogue made
    ops::mm(ops::t(dy2), h_, d_.dw_down);
  }
  h_ = {};
  stacked_gate_up_backward();
}

// down: y = h @ W_down^T. dh = dy @ W_down; dW_down = (dy^T @ h), written straight into the gradient. h, down's saved
// input, is released with its node.
void TrainStep::down_backward(const Tensor& dy2) {
  {
    Node n("MmBackward0");
    const Tensor mat2 = p_.w_down.t();
    dh_ = ladder::empty({rows_, hidden_}, ladder::DType::BF16);
    ops::mm(dy2, ops::t(mat2), dh_);
    ops::mm(ops::t(dy2), h_, d_.dw_down);
    ops::t(d_.dw_down);
  }
  h_ = {};
}

// Fused (and recompute without dgated_gemm): the fused op's own node, dg and du in one kernel, side by side in
// [dg | du].
void TrainStep::fused_gelu_mul_backward() {
  {
    Node n("GeluMulBackward");
    dgu_ = ladder::empty({rows_, 2 * hidden_}, ladder::DType::BF16);
    dg_ = cols_of(dgu_, 0, hidden_);
    du_ = cols_of(dgu_, hidden_, hidden_);
    gelu_mul_backward(dh_, g_, u_, dg_, du_);
  }
  dh_ = g_ = u_ = {};
}

// Gate and up as one Linear of the stacked weight (every mode but eager): dx = [dg | du] @ [W_gate; W_up],
// [dW_gate; dW_up] = [dg | du]^T @ x. One GEMM each, with K = 2 hidden for dx.
void TrainStep::stacked_gate_up_backward() {
  {
    Node n("MmBackward0");
    ops::mm(dgu_, p_.w_gate_up, d_.dx.reshape({rows_, dim_}));
    ops::mm(ops::t(dgu_), x_rows(), d_.dw_gate_up);
  }
  if (!keep_dg_du_) dgu_ = dg_ = du_ = {};
}

// Eager: the rest of down's nodes as autograd records them. The view and the transpose move no data and launch no
// kernel, and AccumulateGrad of a first gradient stores it as it is: they are run only so that the trace has
// PyTorch's nodes and ranges, op for op.
void TrainStep::eager_down_views() {
  {
    Node n("ViewBackward0");
    ops::reshape(dh_, {p_.x.size(0), p_.x.size(1), hidden_});
  }
  {
    Node n("TBackward0");
    ops::t(d_.dw_down.t());
  }
  accumulate_grad();
}

// Eager: h = a * u with a = gelu(g), as two of autograd's nodes: MulBackward0 (grad of a is dh * u, grad of u is
// dh * a), then GeluBackward0 (dg from the grad of a and g).
void TrainStep::eager_gelu_mul_backward() {
  const auto dt = ladder::DType::BF16;
  {
    Node n("MulBackward0");
    dh_u_ = ladder::empty({rows_, hidden_}, dt);
    ch03::mul(dh_, u_, dh_u_);
    du_ = ladder::empty({rows_, hidden_}, dt);
    ch03::mul(dh_, a_, du_);
  }
  dh_ = a_ = u_ = {};
  {
    Node n("GeluBackward0");
    dg_ = ladder::empty({rows_, hidden_}, dt);
    gelu_backward(dh_u_, g_, dg_);  // eager only, as PyTorch's node runs it: so the trace matches torch's op for op
  }
  dh_u_ = g_ = {};
}

// Eager: up, then gate, each Linear's nodes as for down. x's two gradients meet in the engine's input buffer, which
// adds the second to the first in place (aten::add_ under the node that produced the second).
void TrainStep::eager_gate_up_backward() {
  const Tensor dx2 = d_.dx.reshape({rows_, dim_});
  eager_linear_backward(/*up=*/true, dx2);
  eager_linear_backward(/*up=*/false, dx2);
  dx_part_ = {};
  accumulate_grad();  // x's
}

// One of eager's two input Linears (up, or gate): its gradient's view, its MmBackward0 (x's gradient, up's into dx2
// and gate's into a buffer added to it, and the weight's), the views back, and its weight's AccumulateGrad.
void TrainStep::eager_linear_backward(bool up, const Tensor& dx2) {
  const Tensor w = up ? p_.w_up() : p_.w_gate(), dw = up ? d_.dw_up() : d_.dw_gate();
  if (!up) dx_part_ = ladder::empty({rows_, dim_}, ladder::DType::BF16);
  const Tensor dx_here = up ? dx2 : dx_part_;
  Tensor grad2;
  {
    Node n("UnsafeViewBackward0");
    grad2 = ops::reshape(up ? du_ : dg_, {rows_, hidden_});
  }
  {
    Node n("MmBackward0");
    ops::mm(grad2, ops::t(w.t()), dx_here);
    ops::mm(ops::t(grad2), x_rows(), dw);
    ops::t(dw);
  }
  grad2 = {};
  if (!keep_dg_du_) (up ? du_ : dg_) = {};  // its last user ran: released
  {
    Node n("ViewBackward0");
    ops::reshape(dx_here, p_.x.shape);
    if (!up) add_(dx2, dx_part_);  // eager only: PyTorch's engine adds x's two gradients here, so the trace does too
  }
  {
    Node n("TBackward0");
    ops::t(dw.t());
  }
  accumulate_grad();
}

std::vector<std::pair<std::string, size_t>> TrainStep::held_for_backward() const {
  if (mode_ == Mode::Eager)
    return {{"g", g_.nbytes()}, {"gelu(g)", a_.nbytes()}, {"u", u_.nbytes()}, {"h", h_.nbytes()}};
  if (mode_ == Mode::Recompute) return {};
  if (mode_ == Mode::Epilogue) return {{"g", g_.nbytes()}, {"u", u_.nbytes()}};
  return {{"g", g_.nbytes()}, {"u", u_.nbytes()}, {"h", h_.nbytes()}};
}

void TrainStep::keep_dg_du(bool keep) {
  keep_dg_du_ = keep;
  if (!keep) dgu_ = dg_ = du_ = {};
}

uint64_t TrainStep::dg_du_checksum() const {
  uint64_t h = 0xcbf29ce484222325ull;
  fnv(h, host_bits(dg_));
  fnv(h, host_bits(du_));
  return h;
}

}  // namespace ch06
