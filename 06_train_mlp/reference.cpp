// See reference.h.
#include "06_train_mlp/reference.h"

#include <cmath>

#include "chapter/reference.h"
#include "gpu/tensor.h"

namespace ch06 {
namespace {

double bf16(double v) { return ladder::round_to(ladder::DType::BF16, static_cast<float>(v)); }

double dot(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

}  // namespace

double gelu_tanh_derivative(double x) {
  const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
  const double t = std::tanh(k * (x + c * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x);
}

std::vector<int64_t> evenly(int64_t n, int64_t k) {
  std::vector<int64_t> out;
  if (n <= k) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (int64_t i = 0; i < k; ++i) out.push_back(i * (n - 1) / (k - 1));
  return out;
}

void GradReference::grads_of(double g, double u, double dh, double* h, double* dg, double* du) {
  const double a = bf16(ladder::ref::gelu_tanh(g));
  *h = bf16(a * u);
  *du = bf16(dh * a);
  *dg = bf16(bf16(dh * u) * gelu_tanh_derivative(g));
}

const GradReference::Column& GradReference::column(int64_t j) {
  if (auto it = columns_.find(j); it != columns_.end()) return it->second;
  const int64_t M = v_.rows, d = v_.dim, H = v_.hidden;
  std::vector<float> wd_col(d);
  for (int64_t n = 0; n < d; ++n) wd_col[n] = v_.w_down[n * H + j];
  Column c{std::vector<double>(M), std::vector<double>(M), std::vector<double>(M)};
  for (int64_t m = 0; m < M; ++m) {
    const float* x = &v_.x[m * d];
    const double g = bf16(dot(x, &v_.w_gate_up[j * d], d));
    const double u = bf16(dot(x, &v_.w_gate_up[(H + j) * d], d));
    const double dh = bf16(dot(&v_.dy[m * d], wd_col.data(), d));
    grads_of(g, u, dh, &c.h[m], &c.dg[m], &c.du[m]);
  }
  return columns_[j] = std::move(c);
}

void GradReference::dx_row(int64_t m, const std::vector<int64_t>& cols, double* out) const {
  const int64_t d = v_.dim, H = v_.hidden;
  const float* x = &v_.x[m * d];
  std::vector<double> dh(H, 0.0);  // dy[m] @ W_down, accumulated row by row of W_down
  for (int64_t n = 0; n < d; ++n) {
    const double dy = v_.dy[m * d + n];
    for (int64_t j = 0; j < H; ++j) dh[j] += dy * v_.w_down[n * H + j];
  }
  std::vector<double> acc(d, 0.0);
  for (int64_t j = 0; j < H; ++j) {
    const double g = bf16(dot(x, &v_.w_gate_up[j * d], d));
    const double u = bf16(dot(x, &v_.w_gate_up[(H + j) * d], d));
    double h, dg, du;
    grads_of(g, u, bf16(dh[j]), &h, &dg, &du);
    const float* wg = &v_.w_gate_up[j * d];
    const float* wu = &v_.w_gate_up[(H + j) * d];
    for (int64_t k = 0; k < d; ++k) acc[k] += dg * wg[k] + du * wu[k];
  }
  for (size_t c = 0; c < cols.size(); ++c) out[c] = acc[cols[c]];
}

void GradReference::dw_gate_row(int64_t j, const std::vector<int64_t>& cols, double* out) {
  const std::vector<double>& dg = column(j).dg;
  for (size_t c = 0; c < cols.size(); ++c) {
    double s = 0;
    for (int64_t m = 0; m < v_.rows; ++m) s += dg[m] * v_.x[m * v_.dim + cols[c]];
    out[c] = s;
  }
}

void GradReference::dw_up_row(int64_t j, const std::vector<int64_t>& cols, double* out) {
  const std::vector<double>& du = column(j).du;
  for (size_t c = 0; c < cols.size(); ++c) {
    double s = 0;
    for (int64_t m = 0; m < v_.rows; ++m) s += du[m] * v_.x[m * v_.dim + cols[c]];
    out[c] = s;
  }
}

void GradReference::dw_down_row(int64_t n, const std::vector<int64_t>& cols, double* out) {
  for (size_t c = 0; c < cols.size(); ++c) {
    const std::vector<double>& h = column(cols[c]).h;
    double s = 0;
    for (int64_t m = 0; m < v_.rows; ++m) s += v_.dy[m * v_.dim + n] * h[m];
    out[c] = s;
  }
}

}  // namespace ch06
