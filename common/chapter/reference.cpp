#include "chapter/reference.h"

#include <cmath>

#include "gpu/tensor.h"

namespace ladder::ref {

void matmul_row(const float* x_row, const float* w, const float* b, int64_t K, int64_t N, double* out) {
  for (int64_t n = 0; n < N; ++n) out[n] = b ? b[n] : 0.0;
  for (int64_t k = 0; k < K; ++k) {  // k outer: walks w row by row, cache-friendly
    const double xk = x_row[k];
    const float* wk = w + k * N;
    for (int64_t n = 0; n < N; ++n) out[n] += xk * double(wk[n]);
  }
}

void linear_row(const float* x_row, const float* W, const float* b, int64_t K, int64_t N, double* out) {
  for (int64_t n = 0; n < N; ++n) {
    double acc = b ? b[n] : 0.0;
    const float* wn = W + n * K;
    for (int64_t k = 0; k < K; ++k) acc += double(x_row[k]) * double(wn[k]);
    out[n] = acc;
  }
}

std::vector<double> matmul(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                           int64_t M, int64_t K, int64_t N) {
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m) matmul_row(&x[m * K], w.data(), b.empty() ? nullptr : b.data(), K, N, &y[m * N]);
  return y;
}

std::vector<double> linear(const std::vector<float>& x, const std::vector<float>& W, const std::vector<float>& b,
                           int64_t M, int64_t K, int64_t N) {
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m) linear_row(&x[m * K], W.data(), b.empty() ? nullptr : b.data(), K, N, &y[m * N]);
  return y;
}

void geglu_mlp_row(const float* x_row, const float* gate, const float* up, const float* down, int64_t dim,
                   int64_t hidden, double* out) {
  std::vector<double> g(hidden), u(hidden);
  linear_row(x_row, gate, nullptr, dim, hidden, g.data());
  linear_row(x_row, up, nullptr, dim, hidden, u.data());
  std::vector<float> m(hidden);
  for (int64_t j = 0; j < hidden; ++j) {
    const float gj = round_to(DType::BF16, float(g[j])), uj = round_to(DType::BF16, float(u[j]));
    const float hj = round_to(DType::BF16, float(gelu_tanh(gj)));
    m[j] = round_to(DType::BF16, hj * uj);
  }
  linear_row(m.data(), down, nullptr, hidden, dim, out);
}

double gelu_tanh(double x) {
  const double kAlpha = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(kAlpha * (x + 0.044715 * x * x * x)));
}

}  // namespace ladder::ref
