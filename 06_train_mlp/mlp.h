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
//
// The weights of gate and up are the two halves of one [2H, d] tensor (and so are their gradients), so the fused
// backward can treat them as one Linear. Every tensor is allocated once, before the first step, as PyTorch's caching
// allocator hands back the same blocks step after step: the steps themselves allocate nothing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpu/tensor.h"

namespace ch06 {

enum class Mode { Eager, Fused };
// "eager" or "fused"; "epilogue" and "recompute" (the next modes of the chapter's design) and anything else are
// refused with a ladder::UsageError in one line.
Mode parse_mode(const std::string& name);
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
  // Allocates everything the mode's forward keeps and its backward writes.
  TrainStep(Mode mode, const Params& params, const Grads& grads);

  void forward();   // y, and what the backward needs
  void backward();  // the gradients, from dy and what the forward kept

  const ladder::Tensor& y() const { return y_; }
  // Every tensor the forward and backward write, to poison before a checked step.
  std::vector<ladder::Tensor> written() const;
  // What the forward keeps alive for the backward, beyond x and the weights: (name, bytes) per tensor.
  std::vector<std::pair<std::string, size_t>> held_for_backward() const;
  // FNV-1a over the bits of dg, then du (row by row): the same in every mode whose arithmetic is eager's.
  uint64_t dg_du_checksum() const;

 private:
  Mode mode_;
  Params p_;
  Grads d_;
  int64_t rows_, dim_, hidden_;
  ladder::Tensor g_, u_, a_, h_, y_;  // a = gelu(g) (eager only), h = a * u
  ladder::Tensor dh_, dg_, du_;       // dg and du: views into dgu_ (fused) or tensors of their own (eager)
  ladder::Tensor dgu_, dh_u_, dx_part_;
};

}  // namespace ch06
