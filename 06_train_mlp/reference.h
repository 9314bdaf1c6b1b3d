// The MLP's gradients in float64 on the CPU, element by element, for the chapter's check. Inputs are the exact values
// the GPU saw (bf16, as floats). Like common/chapter/reference.h's forward row, it rounds to bf16 where the GPU stores
// a bf16 tensor (g, u, gelu(g), h, dh, dh * u, dg, du), so what is left between the two is summation order and the last
// bit of a rounding.
//
// A gradient of a weight sums over every token: dW_gate[j, :] = sum_m dg[m, j] x[m, :] needs hidden column j of dg for
// all rows, which needs g, u and dh at column j for all rows (3 x rows x dim multiply-adds). Those columns are made
// once and kept, so dW_gate, dW_up and dW_down checked at the same hidden columns cost one pass each.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace ch06 {

struct MlpValues {
  int64_t rows = 0, dim = 0, hidden = 0;
  std::vector<float> x, dy;      // [rows, dim]
  std::vector<float> w_gate_up;  // [2 hidden, dim]: gate's rows, then up's
  std::vector<float> w_down;     // [dim, hidden]
};

class GradReference {
 public:
  explicit GradReference(MlpValues v) : v_(std::move(v)) {}

  // Row m of dx at the given columns.
  void dx_row(int64_t m, const std::vector<int64_t>& cols, double* out) const;
  // Row j of dW_gate or dW_up ([hidden, dim]), at the given columns.
  void dw_gate_row(int64_t j, const std::vector<int64_t>& cols, double* out);
  void dw_up_row(int64_t j, const std::vector<int64_t>& cols, double* out);
  // Row n of dW_down ([dim, hidden]), at the given hidden columns.
  void dw_down_row(int64_t n, const std::vector<int64_t>& cols, double* out);

 private:
  struct Column {  // hidden column j, every row
    std::vector<double> h, dg, du;
  };
  const Column& column(int64_t j);
  // g, u and dh of one element to h, dg and du, with the GPU's roundings.
  static void grads_of(double g, double u, double dh, double* h, double* dg, double* du);

  MlpValues v_;
  std::map<int64_t, Column> columns_;
};

// d/dx of gelu_tanh(x) = 0.5 x (1 + tanh(k (x + 0.044715 x^3))), k = sqrt(2 / pi), in float64.
double gelu_tanh_derivative(double x);

// Up to k indices of [0, n), evenly spaced, first and last included (all of them when n <= k).
std::vector<int64_t> evenly(int64_t n, int64_t k);

}  // namespace ch06
