// GPU tests of the backward's hand-written kernels: the fused gelu_mul backward, and eager's gelu_backward and add_.
// Without a GPU every test skips.
//
// What is checked:
//  - gelu_mul_backward against a float64 CPU reference (with the roundings eager makes), on fresh random inputs in
//    [-6, 6] (gelu's flat tails included), at shapes whose row length is and is not a multiple of the 8-element vector
//    and the blog's [8192, 3072], with dg and du as two tensors of their own and as the halves of one [M, 2H] tensor;
//    outputs poisoned with NaN first, so an unwritten element fails, and nothing written past them;
//  - that this check can fail: a launch that skips the last row leaves NaN there and the comparison reports it;
//  - dg and du are bit for bit what eager's three kernels (mul, mul, gelu_backward) give;
//  - the GELU derivative (gelu_backward.cuh's sigmoid form) within one bf16 step of the exact one on every bf16 input;
//  - pointers that are not 16-byte aligned still give the right answer (the plain kernel);
//  - the ops refuse wrong dtypes, shapes and overlapping outputs with a ladder::Error.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "03_simple_mlp/kernels.cuh"
#include "06_train_mlp/kernels.cuh"
#include "06_train_mlp/reference.h"
#include "base/error.h"
#include "chapter/compare.h"
#include "chapter/reference.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/tests/kernel_test_util.h"
#include "gpu/values.h"

namespace {

using ladder::DType;
using ladder::Tensor;
using namespace ladder::testing;

double bf(double v) { return ladder::round_to(DType::BF16, static_cast<float>(v)); }

using ch06::gelu_tanh_derivative;  // reference.h

struct Inputs {
  int64_t rows, cols;
  std::vector<float> dh, g, u;
  Tensor ddh, dg_in, du_in;  // on the device: dh, g, u
  Inputs(int64_t r, int64_t c, uint64_t seed) : rows(r), cols(c) {
    dh = ladder::random_values(r * c, seed, DType::BF16, -6.0f, 6.0f);
    g = ladder::random_values(r * c, seed + 1, DType::BF16, -6.0f, 6.0f);
    u = ladder::random_values(r * c, seed + 2, DType::BF16, -6.0f, 6.0f);
    ddh = ladder::to_device(dh, {r, c}, DType::BF16);
    dg_in = ladder::to_device(g, {r, c}, DType::BF16);
    du_in = ladder::to_device(u, {r, c}, DType::BF16);
  }
  // The reference: du = bf16(dh * bf16(gelu(g))), dg = bf16(bf16(dh * u) * gelu'(g)).
  void reference(std::vector<double>* dg, std::vector<double>* du) const {
    dg->resize(dh.size());
    du->resize(dh.size());
    for (size_t i = 0; i < dh.size(); ++i) {
      const double a = bf(ladder::ref::gelu_tanh(g[i]));
      (*du)[i] = bf(double(dh[i]) * a);
      (*dg)[i] = bf(bf(double(dh[i]) * u[i]) * gelu_tanh_derivative(g[i]));
    }
  }
};

// A [rows, cols] view of columns [first, first + cols) of an [rows, ld] tensor, copied to the host.
std::vector<float> host_view(const Tensor& t, int64_t rows, int64_t cols, int64_t ld, int64_t first) {
  const std::vector<float> all = ladder::to_host(t);
  std::vector<float> out;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out.push_back(all[r * ld + first + c]);
  return out;
}

Tensor strided_view(const Tensor& t, int64_t rows, int64_t cols, int64_t ld, int64_t first) {
  Tensor v = ladder::view_of(t.ptr<bf16>() + first, DType::BF16, {rows, cols});
  v.strides = {ld, 1};
  return v;
}

const std::vector<std::pair<int64_t, int64_t>> kRowsCols = {{1, 1}, {1, 7}, {3, 8}, {5, 9}, {17, 200}, {8192, 3072}};

TEST(GeluMulBackward, MatchesCpuReferenceInSeparateOutputs) {
  SKIP_WITHOUT_GPU();
  for (size_t s = 0; s < kRowsCols.size(); ++s) {
    const auto [rows, cols] = kRowsCols[s];
    SCOPED_TRACE("shape [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
    const Inputs in(rows, cols, 100 + 10 * s);
    std::vector<double> ref_dg, ref_du;
    in.reference(&ref_dg, &ref_du);
    GuardedOutput dg({rows, cols}), du({rows, cols});
    dg.poison();
    du.poison();
    ch06::gelu_mul_backward(in.ddh, in.dg_in, in.du_in, dg.view, du.view);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (const auto& [what, out, ref] : {std::tuple{"dg", &dg, &ref_dg}, {"du", &du, &ref_du}}) {
      const auto r = ladder::compare(ladder::to_host(out->view), *ref, ladder::tolerance_for(DType::BF16));
      EXPECT_TRUE(r.ok) << what << ": " << r.mismatches << " values differ\n" << r.report;
      EXPECT_TRUE(out->guard_untouched()) << what << ": wrote past the end of the output";
    }
  }
}

TEST(GeluMulBackward, MatchesCpuReferenceSideBySide) {
  SKIP_WITHOUT_GPU();
  for (size_t s = 0; s < kRowsCols.size(); ++s) {
    const auto [rows, cols] = kRowsCols[s];
    SCOPED_TRACE("shape [" + std::to_string(rows) + ", " + std::to_string(cols) + "] as [dg | du]");
    const Inputs in(rows, cols, 200 + 10 * s);
    std::vector<double> ref_dg, ref_du;
    in.reference(&ref_dg, &ref_du);
    const Tensor dgu = ladder::empty({rows, 2 * cols}, DType::BF16);
    ladder::poison(dgu);
    ch06::gelu_mul_backward(in.ddh, in.dg_in, in.du_in, strided_view(dgu, rows, cols, 2 * cols, 0),
                            strided_view(dgu, rows, cols, 2 * cols, cols));
    CUDA_CHECK(cudaDeviceSynchronize());
    const ladder::Tolerance tol = ladder::tolerance_for(DType::BF16);
    const auto rg = ladder::compare(host_view(dgu, rows, cols, 2 * cols, 0), ref_dg, tol);
    const auto ru = ladder::compare(host_view(dgu, rows, cols, 2 * cols, cols), ref_du, tol);
    EXPECT_TRUE(rg.ok) << "dg: " << rg.report;
    EXPECT_TRUE(ru.ok) << "du: " << ru.report;
  }
}

// The check above can fail: a launch that leaves the last row unwritten leaves NaN there, and compare says so.
TEST(GeluMulBackward, CheckCatchesAnUnwrittenRow) {
  SKIP_WITHOUT_GPU();
  const Inputs in(5, 9, 300);
  std::vector<double> ref_dg, ref_du;
  in.reference(&ref_dg, &ref_du);
  const Tensor dg = ladder::empty({5, 9}, DType::BF16), du = ladder::empty({5, 9}, DType::BF16);
  ladder::poison(dg);
  ladder::poison(du);
  ch06::launch_gelu_mul_backward(in.ddh.ptr<bf16>(), in.dg_in.ptr<bf16>(), in.du_in.ptr<bf16>(), dg.ptr<bf16>(),
                                 du.ptr<bf16>(), 4, 9, 9, 9, 0);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto r = ladder::compare(ladder::to_host(dg), ref_dg, ladder::tolerance_for(DType::BF16));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 9);
}

// Fusion changes memory traffic, not numbers: dg and du are eager's bits.
TEST(GeluMulBackward, BitIdenticalToEagerKernels) {
  SKIP_WITHOUT_GPU();
  for (size_t s = 0; s < kRowsCols.size(); ++s) {
    const auto [rows, cols] = kRowsCols[s];
    SCOPED_TRACE("shape [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
    const Inputs in(rows, cols, 400 + 10 * s);
    const int64_t n = rows * cols;
    const Tensor flat_dh = in.ddh.reshape({n}), flat_g = in.dg_in.reshape({n}), flat_u = in.du_in.reshape({n});
    const Tensor a = ladder::empty({n}, DType::BF16), dh_u = ladder::empty({n}, DType::BF16);
    const Tensor eager_dg = ladder::empty({n}, DType::BF16), eager_du = ladder::empty({n}, DType::BF16);
    ch03::gelu(flat_g, a);
    ch03::mul(flat_dh, flat_u, dh_u);
    ch03::mul(flat_dh, a, eager_du);
    ch06::gelu_backward(dh_u, flat_g, eager_dg);
    const Tensor dg = ladder::empty({rows, cols}, DType::BF16), du = ladder::empty({rows, cols}, DType::BF16);
    ladder::poison(dg);
    ladder::poison(du);
    ch06::gelu_mul_backward(in.ddh, in.dg_in, in.du_in, dg, du);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(bits_of(dg.data, n), bits_of(eager_dg.data, n)) << "dg differs from eager's";
    EXPECT_EQ(bits_of(du.data, n), bits_of(eager_du.data, n)) << "du differs from eager's";
  }
}

TEST(GeluMulBackward, MisalignedPointersStillWork) {
  SKIP_WITHOUT_GPU();
  const int64_t rows = 3, cols = 16, n = rows * cols;
  const Inputs in(rows, cols, 500);
  std::vector<double> ref_dg, ref_du;
  in.reference(&ref_dg, &ref_du);
  const Tensor buf = ladder::empty({2 * n + 2}, DType::BF16);
  ladder::poison(buf);
  const Tensor dg = ladder::view_of(buf.ptr<bf16>() + 1, DType::BF16, {rows, cols});
  const Tensor du = ladder::view_of(buf.ptr<bf16>() + 1 + n, DType::BF16, {rows, cols});
  ch06::gelu_mul_backward(in.ddh, in.dg_in, in.du_in, dg, du);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> all = ladder::to_host(buf);
  EXPECT_TRUE(ladder::compare({all.begin() + 1, all.begin() + 1 + n}, ref_dg, ladder::tolerance_for(DType::BF16)).ok);
  EXPECT_TRUE(
      ladder::compare({all.begin() + 1 + n, all.begin() + 1 + 2 * n}, ref_du, ladder::tolerance_for(DType::BF16)).ok);
  EXPECT_TRUE(std::isnan(all.front()) && std::isnan(all.back())) << "wrote outside the outputs";
}

TEST(GeluMulBackward, RefusesBadTensors) {
  SKIP_WITHOUT_GPU();
  const Inputs in(4, 8, 600);
  const Tensor out = ladder::empty({4, 8}, DType::BF16), out2 = ladder::empty({4, 8}, DType::BF16);
  const Tensor f32 = ladder::empty({4, 8}, DType::F32), small = ladder::empty({4, 7}, DType::BF16);
  // Each refusal by its message, so that a test cannot pass on another refusal than the one it means.
  const std::string dg_view = "gelu_mul_backward: dg must be a bf16 [4, 8] view", overlap = "must not overlap";
  EXPECT_TRUE(throws_error([&] { ch06::gelu_mul_backward(in.ddh, in.dg_in, in.du_in, f32, out); }, dg_view));
  EXPECT_TRUE(throws_error([&] { ch06::gelu_mul_backward(in.ddh, in.dg_in, in.du_in, small, out); }, dg_view));
  EXPECT_TRUE(throws_error([&] { ch06::gelu_mul_backward(in.ddh, in.dg_in, small, out, out2); },
                           "gelu_mul_backward: u has 28 elements"));
  EXPECT_TRUE(
      throws_error([&] { ch06::gelu_mul_backward(in.ddh, in.dg_in, in.du_in, out, out); }, overlap));  // dg is du
  EXPECT_TRUE(throws_error([&] { ch06::gelu_mul_backward(in.ddh, in.dg_in, in.du_in, in.dg_in, out); },
                           overlap));  // dg is g
  EXPECT_NO_THROW(ch06::gelu_mul_backward(in.ddh, in.dg_in, in.du_in, out, out2));
  CUDA_CHECK(cudaDeviceSynchronize());
}

TEST(EagerOps, GeluBackwardAndAddMatchCpuReference) {
  SKIP_WITHOUT_GPU();
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{9}, int64_t{1000003}}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const std::vector<float> a = ladder::random_values(n, 700 + n, DType::BF16, -6.0f, 6.0f);
    const std::vector<float> b = ladder::random_values(n, 800 + n, DType::BF16, -6.0f, 6.0f);
    const Tensor da = ladder::to_device(a, {n}, DType::BF16), db = ladder::to_device(b, {n}, DType::BF16);
    GuardedOutput out({n});
    out.poison();
    ch06::gelu_backward(da, db, out.view);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> ref(n), sum(n);
    for (int64_t i = 0; i < n; ++i) {
      ref[i] = double(a[i]) * gelu_tanh_derivative(b[i]);
      sum[i] = double(a[i]) + b[i];
    }
    auto r = ladder::compare(ladder::to_host(out.view), ref, ladder::tolerance_for(DType::BF16));
    EXPECT_TRUE(r.ok) << "gelu_backward: " << r.report;
    EXPECT_TRUE(out.guard_untouched());
    ch06::add_(da, db);
    CUDA_CHECK(cudaDeviceSynchronize());
    r = ladder::compare(ladder::to_host(da), sum, ladder::tolerance_for(DType::BF16));
    EXPECT_TRUE(r.ok) << "add_: " << r.report;
  }
}

// The derivative of gelu_backward.cuh on all 65536 bf16 inputs (through eager's gelu_backward with dy = 1, which
// rounds it to bf16), against the float64 derivative in the same sigmoid form (exp(-2z) * s for 1 - s: no
// cancellation, so the reference itself is right where tanh's 1 - t^2 rounds to 0): within one bf16 step, except
// where the exact value is below 1e-30 (flush-to-zero gives 0 there). Inputs with |x| >= 2^60 are left out: x^2 * x
// overflows float32 there and the derivative is NaN, as in ATen's formula.
TEST(EagerOps, GeluDerivativeWithinOneStepOnEveryBf16Input) {
  SKIP_WITHOUT_GPU();
  std::vector<float> g, ones;
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint32_t bits = b << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    if (std::isfinite(v) && std::fabs(v) < 0x1p60f) g.push_back(v), ones.push_back(1.0f);
  }
  const int64_t n = static_cast<int64_t>(g.size());
  const Tensor dg_in = ladder::to_device(g, {n}, DType::BF16), dy = ladder::to_device(ones, {n}, DType::BF16);
  GuardedOutput out({n});
  out.poison();
  ch06::gelu_backward(dy, dg_in, out.view);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got = ladder::to_host(out.view);
  int off = 0;
  std::string first;
  for (int64_t i = 0; i < n; ++i) {
    const double x = g[i], k = std::sqrt(2.0 / M_PI), c = 0.044715, z = k * (x + c * x * x * x);
    const double e = -2.0 * z > 700.0 ? INFINITY : std::exp(-2.0 * z);
    const double s = 1.0 / (1.0 + e), one_minus_s = std::isinf(e) ? 1.0 : e * s;
    const double want = s + 2.0 * x * s * one_minus_s * k * (1.0 + 3.0 * c * x * x);
    const double step = want == 0 ? 0 : std::ldexp(1.0, std::ilogb(bf(want)) - 7);
    const bool ok = std::fabs(want) < 1e-30 ? std::fabs(got[i]) < 1e-30 : std::fabs(got[i] - bf(want)) <= step;
    if (!ok && off++ == 0)
      first = "x " + std::to_string(x) + ": " + std::to_string(got[i]) + ", exact " + std::to_string(want);
  }
  EXPECT_EQ(off, 0) << off << " of " << n << " inputs more than one bf16 step off; the first: " << first;
  EXPECT_TRUE(out.guard_untouched());
}

}  // namespace
