// CPU references in float64. Inputs are the exact values the GPU saw (already rounded to the tensor's dtype).
// The row versions let a chapter check a sample of rows of a large output (rows of a GEMM are independent).
#pragma once

#include <cstdint>
#include <vector>

namespace ladder::ref {

// One row of x @ w (+ b): x_row has K values, w is [K, N] row-major, b has N values or is null.
void matmul_row(const float* x_row, const float* w, const float* b, int64_t K, int64_t N, double* out);
// One row of x @ W^T (+ b) with W stored [N, K] like nn.Linear.
void linear_row(const float* x_row, const float* W, const float* b, int64_t K, int64_t N, double* out);

// Whole outputs, [M, N] row-major; b may be empty.
std::vector<double> matmul(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                           int64_t M, int64_t K, int64_t N);
std::vector<double> linear(const std::vector<float>& x, const std::vector<float>& W, const std::vector<float>& b,
                           int64_t M, int64_t K, int64_t N);

// One row of the GeGLU MLP, y = down(gelu_tanh(x @ gate^T) * (x @ up^T)), rounding to bf16 where the GPU stores a
// bf16 tensor (g, u, gelu(g), the product), so the only differences left are summation order and last-bit rounding.
void geglu_mlp_row(const float* x_row, const float* gate, const float* up, const float* down, int64_t dim,
                   int64_t hidden, double* out);

// tanh-approximated GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
double gelu_tanh(double x);

}  // namespace ladder::ref
