// Chapter 06: one training step of the GeGLU MLP, y = down(gelu_tanh(gate(x)) * up(x)), in bf16 without biases: the
// forward, and the backward for a given dy (gradients of x and of the three weights), in one of the chapter's modes.
//
//   eager  what PyTorch's autograd runs, op for op, under the ranges its trace names ("autograd::engine::
//          evaluate_function: MmBackward0" > "MmBackward0" > "aten::mm"): the forward keeps g, gelu(g), u and h;
//          the backward runs 6 GEMMs, MulBackward0's two muls, GeluBackward0's gelu_backward, and the add that
//          sums x's two gradients: 10 kernels.
//   fused  03_fused_mlp's forward (one gelu_mul kernel), keeping g, u and h; the backward runs two GEMMs for the
//          down Linear, one gelu_mul_backward kernel writing [dg | du] side by side, and one GEMM each for dx and the
//          stacked [dW_gate; dW_up]: 5 kernels.
//   epilogue  one hand-written gated GEMM with 04's bits for h that also stores g and u (geglu_gemm_keep.cu, Hopper),
//          keeping g and u only; the backward's first GEMM, dh = dy @ W_down, is hand-written too
//          (dgated_gemm.cu, Hopper) with the gelu_mul backward in its epilogue: dh never reaches memory, and h is
//          recomputed there for dW_down. Then three GEMMs (dW_down, dx, the stacked dW): 4 kernels.
//   recompute  04_epilogue_mlp's forward (gate, up, gelu and the product in one geglu_gemm kernel), keeping nothing
//          but x. Where epilogue's kernel runs, the backward replays g and u as one GEMM of the stacked weight into
//          [g | u] and then runs epilogue's backward: 5 kernels; elsewhere it replays g and u (two GEMMs)
//          and h (gelu_mul), then runs fused's backward: 8 kernels.
//
// The weights of gate and up are the two halves of one [2H, d] tensor (and so are their gradients), so the fused
// backward can treat them as one Linear. Activations and intermediate gradients are allocated inside the step and
// freed where autograd frees them, through the ladder's caching allocator (gpu/allocator.h): after the first step no
// allocation reaches cudaMalloc, and the trace's [memory] events show what each mode holds. The gradients of x and
// the weights are allocated once (like .grad kept across steps).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpu/tensor.h"

namespace ch06 {

enum class Mode { Eager, Fused, Epilogue, Recompute };
// "eager", "fused", "epilogue" or "recompute"; anything else is refused with a ladder::UsageError in one line.
Mode parse_mode(const std::string& name);
// Empty when `mode` runs on a GPU of compute capability major.minor at these sizes, else the one line saying why not
// (recompute's forward kernel, 04's geglu_gemm, needs dim and hidden multiples of 8; epilogue's backward GEMM that and
// a Hopper GPU). major < 0: the sizes only, before the GPU is known.
std::string mode_cannot_run(Mode mode, int64_t dim, int64_t hidden, int major = -1, int minor = -1);
std::string mode_name(Mode mode);

// The step's inputs and gradients: x and dy [batch, seq, dim]; w_gate_up [2 hidden, dim] (gate's weight in rows
// 0..hidden, up's below), w_down [dim, hidden]; the gradients have the same shapes.
struct Params {
  ladder::Tensor x, dy, w_gate_up, w_down;
  ladder::Tensor w_gate() const;  // views of the halves of w_gate_up
  ladder::Tensor w_up() const;
};
struct Grads {
  ladder::Tensor dx, dw_gate_up, dw_down;
  ladder::Tensor dw_gate() const;
  ladder::Tensor dw_up() const;
};
// Allocates gradients for these parameters (uninitialized).
Grads grads_like(const Params& p);

class TrainStep {
 public:
  TrainStep(Mode mode, const Params& params, const Grads& grads);

  // y, and what the backward needs, allocated here as autograd's saved tensors are.
  void forward();
  // The gradients, from dy and what the forward kept. Each saved tensor and each intermediate gradient is freed as
  // soon as autograd would free it (after the node that used it last), so the allocator's curve in the trace has
  // PyTorch's shape; y is freed at the end, as the loss that held it would be.
  void backward();

  const ladder::Tensor& y() const { return y_; }
  // What the forward keeps alive for the backward, beyond x and the weights: (name, bytes) per tensor. Call after
  // forward().
  std::vector<std::pair<std::string, size_t>> held_for_backward() const;
  // Keep dg and du after each backward, for dg_du_checksum(); false releases what was kept.
  void keep_dg_du(bool keep);
  // FNV-1a over the bits of dg, then du (row by row): the same in every mode whose arithmetic is eager's.
  uint64_t dg_du_checksum() const;

 private:
  // The backward's stages, in the order backward() runs them (mlp.cpp says which modes run which).
  ladder::Tensor x_rows() const;  // x as [rows, dim], a view
  ladder::Tensor dy_rows();
  void replay_g_u();
  void dgated_backward(const ladder::Tensor& dy2);
  void down_backward(const ladder::Tensor& dy2);
  void fused_gelu_mul_backward();
  void stacked_gate_up_backward();
  void eager_down_views();
  void eager_gelu_mul_backward();
  void eager_gate_up_backward();
  void eager_linear_backward(bool up, const ladder::Tensor& dx2);

  Mode mode_;
  Params p_;
  Grads d_;
  int64_t rows_, dim_, hidden_;
  bool keep_dg_du_ = false;
  bool dgated_;                        // the backward's first GEMM is dgated_gemm: epilogue, and recompute on Hopper
  ladder::Tensor g_, u_, a_, h_, y_;  // a = gelu(g) (eager only), h = a * u
  ladder::Tensor gu_;                  // recompute's replay [g | u] (g_ and u_ its halves) where dgated_gemm runs
  ladder::Tensor dh_, dg_, du_;       // dg and du: views into dgu_ (fused) or tensors of their own (eager)
  ladder::Tensor dgu_, dh_u_, dx_part_;
};

}  // namespace ch06
