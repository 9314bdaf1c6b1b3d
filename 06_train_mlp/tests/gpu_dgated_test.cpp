// GPU tests of the epilogue mode's backward GEMM (dgated_gemm.cu, and dgated_gemm_wide.cu from dim 1536 on): dh =
// dy @ W_down with the gelu_mul backward in its epilogue. Skipped without a GPU, and on a GPU or build it cannot run
// on (it says why).
//
// What is checked, at odd and at the blog's shapes:
//  - dg, du and h against a float64 CPU reference (dh rounded to bf16 as the kernel rounds it), on sampled rows, and
//    every element of [dg | du] and h finite (they start as NaN, so an element the kernel does not write fails), and
//    the elements after each output untouched;
//  - h bit for bit what 03's gelu_mul makes from the same g and u;
//  - dg and du against the fused mode's (cuBLAS dh, then gelu_mul_backward): the same bits wherever the two float32
//    sums of dh round to the same bf16, so all but a small fraction;
//  - its refusals, each by its message (outputs over an input or over each other among them).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "03_fused_mlp/kernels.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/kernels.cuh"
#include "06_train_mlp/reference.h"
#include "chapter/compare.h"
#include "chapter/reference.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/tests/kernel_test_util.h"
#include "gpu/values.h"
#include "hopper/launch.h"

namespace {

using ladder::DType;
using ladder::Tensor;
using namespace ladder::testing;

double bf(double v) { return ladder::round_to(DType::BF16, static_cast<float>(v)); }

using ch06::gelu_tanh_derivative;  // reference.h

Tensor columns(const Tensor& t, int64_t first, int64_t count) {  // [rows, count] view of a contiguous [rows, n]
  Tensor v = ladder::view_of(t.ptr<bf16>() + first, DType::BF16, {t.size(0), count});
  v.strides = {t.size(1), 1};
  return v;
}

TEST(DgatedGemm, MatchesCpuReferenceAndTheFusedPath) {
  SKIP_WITHOUT_GPU();
  const hopper::DeviceInfo& gpu = hopper::current_device();
  if (const std::string why = ch06::dgated_gemm_cannot_run(gpu.major, gpu.minor, 8, 8); !why.empty())
    GTEST_SKIP() << why;
  for (auto [M, dim, hidden] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 256},
                                {37, 72, 264},
                                {200, 768, 520},
                                {1300, 64, 136},  // 11 row blocks: a full group of kGroupM = 8 and a group of 3
                                {1999, 200, 2056},
                                {8192, 768, 3072},
                                // dim >= kDgatedWideFromDim: dgated_gemm_wide.cu's kernel, at its edges too
                                {37, 1536, 264},  // the first dim that takes it
                                {37, 2048, 264},
                                {1300, 2056, 1000},
                                {520, 4096, 11008}}) {
    SCOPED_TRACE("M " + std::to_string(M) + ", dim " + std::to_string(dim) + ", hidden " + std::to_string(hidden));
    const uint64_t seed = 900 + M + dim + hidden;
    const float bh = 1.0f / std::sqrt(float(hidden));
    const std::vector<float> hdy = ladder::random_values(M * dim, seed, DType::BF16);
    const std::vector<float> hwd = ladder::random_values(dim * hidden, seed + 1, DType::BF16, -bh, bh);
    const std::vector<float> hg = ladder::random_values(M * hidden, seed + 2, DType::BF16, -3.0f, 3.0f);
    const std::vector<float> hu = ladder::random_values(M * hidden, seed + 3, DType::BF16, -3.0f, 3.0f);
    const Tensor dy = ladder::to_device(hdy, {M, dim}, DType::BF16),
                 wd = ladder::to_device(hwd, {dim, hidden}, DType::BF16);
    const Tensor g = ladder::to_device(hg, {M, hidden}, DType::BF16),
                 u = ladder::to_device(hu, {M, hidden}, DType::BF16);
    const GuardedOutput dgu_out({M, 2 * hidden}), h_out({M, hidden});
    dgu_out.poison();
    h_out.poison();
    const Tensor &dgu = dgu_out.view, &h = h_out.view;
    ch06::dgated_gemm(dy, wd, g, u, columns(dgu, 0, hidden), columns(dgu, hidden, hidden), h);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (const GuardedOutput* o : {&dgu_out, &h_out}) EXPECT_TRUE(o->guard_untouched()) << "written past the last row";

    // g and u as the halves of one [g | u] (how recompute's replay writes them): the same bits out.
    const Tensor gu = ladder::empty({M, 2 * hidden}, DType::BF16), dgu2 = ladder::empty({M, 2 * hidden}, DType::BF16);
    const Tensor h2 = ladder::empty({M, hidden}, DType::BF16);
    const size_t row = hidden * sizeof(bf16);
    CUDA_CHECK(cudaMemcpy2D(gu.data, 2 * row, g.data, row, row, M, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy2D(gu.ptr<bf16>() + hidden, 2 * row, u.data, row, row, M, cudaMemcpyDeviceToDevice));
    ladder::poison(dgu2);
    ladder::poison(h2);
    ch06::dgated_gemm(dy, wd, columns(gu, 0, hidden), columns(gu, hidden, hidden), columns(dgu2, 0, hidden),
                      columns(dgu2, hidden, hidden), h2);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(bits_of(dgu2.data, 2 * M * hidden), bits_of(dgu.data, 2 * M * hidden)) << "[dg | du] from [g | u]";
    EXPECT_EQ(bits_of(h2.data, M * hidden), bits_of(h.data, M * hidden)) << "h from [g | u]";

    // Against the CPU on sampled rows; every element finite.
    const std::vector<float> got_dgu = ladder::to_host(dgu), got_h = ladder::to_host(h);
    std::vector<float> got;
    std::vector<double> ref;
    for (int64_t m : ch06::evenly(M, 16)) {
      for (int64_t j = 0; j < hidden; ++j) {
        double s = 0;
        for (int64_t k = 0; k < dim; ++k) s += double(hdy[m * dim + k]) * hwd[k * hidden + j];
        const double dh = bf(s), gv = hg[m * hidden + j], uv = hu[m * hidden + j];
        const double a = bf(ladder::ref::gelu_tanh(gv));
        ref.push_back(bf(bf(dh * uv) * gelu_tanh_derivative(gv)));  // dg
        ref.push_back(bf(dh * a));                                  // du
        ref.push_back(bf(a * uv));                                  // h
        got.push_back(got_dgu[m * 2 * hidden + j]);
        got.push_back(got_dgu[m * 2 * hidden + hidden + j]);
        got.push_back(got_h[m * hidden + j]);
      }
    }
    const auto r = ladder::compare(got, ref, ladder::tolerance_for(DType::BF16));
    EXPECT_TRUE(r.ok) << r.mismatches << " of " << r.checked << " differ\n" << r.report;
    int64_t nonfinite = 0;
    for (float v : got_dgu) nonfinite += !std::isfinite(v);
    for (float v : got_h) nonfinite += !std::isfinite(v);
    EXPECT_EQ(nonfinite, 0) << "elements of [dg | du] or h are NaN or Inf (unwritten)";

    // h: gelu_mul's bits. dg and du: the fused path's, but where the two sums round dh apart.
    const Tensor h_fused = ladder::empty({M, hidden}, DType::BF16), dh = ladder::empty({M, hidden}, DType::BF16);
    const Tensor dgu_fused = ladder::empty({M, 2 * hidden}, DType::BF16);
    ch03::gelu_mul(g, u, h_fused);
    ladder::ops::mm(dy, wd, dh);
    ch06::gelu_mul_backward(dh, g, u, columns(dgu_fused, 0, hidden), columns(dgu_fused, hidden, hidden));
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(bits_of(h.data, M * hidden), bits_of(h_fused.data, M * hidden)) << "h differs from gelu_mul's";
    const std::vector<uint16_t> a_bits = bits_of(dgu.data, 2 * M * hidden),
                                b_bits = bits_of(dgu_fused.data, 2 * M * hidden);
    int64_t differ = 0;
    for (size_t i = 0; i < a_bits.size(); ++i) differ += a_bits[i] != b_bits[i];
    EXPECT_LT(double(differ), 0.05 * double(a_bits.size()))
        << differ << " of " << a_bits.size() << " differ from fused";
    std::printf("  M %ld dim %ld hidden %ld: %ld of %zu dg/du values differ from the fused path's bits\n", long(M),
                long(dim), long(hidden), long(differ), a_bits.size());
  }
}

TEST(DgatedGemm, RefusesBadTensors) {
  SKIP_WITHOUT_GPU();
  const Tensor dy = ladder::empty({4, 64}, DType::BF16), wd = ladder::empty({64, 256}, DType::BF16);
  const Tensor g = ladder::empty({4, 256}, DType::BF16);
  const Tensor dgu = ladder::empty({4, 512}, DType::BF16), h = ladder::empty({4, 256}, DType::BF16);
  const Tensor small = ladder::empty({4, 128}, DType::BF16);
  // Each refusal by its message, so that a test cannot pass on another refusal than the one it means.
  const std::string views = "g, u, dg and du must be bf16 [M, hidden] views";
  EXPECT_TRUE(
      throws_error([&] { ch06::dgated_gemm(dy, wd, g, small, columns(dgu, 0, 256), columns(dgu, 256, 256), h); },
                   views));  // u too narrow
  EXPECT_TRUE(
      throws_error([&] { ch06::dgated_gemm(dy, wd, g, g, columns(dgu, 0, 256), small, h); }, views));  // du
  EXPECT_TRUE(
      throws_error([&] { ch06::dgated_gemm(small, wd, g, g, columns(dgu, 0, 256), columns(dgu, 256, 256), h); },
                   "dy must be [..., dim > 0] and W_down [dim, hidden]"));  // dy's last dimension is not W_down's dim
  // g and u with different row strides (one contiguous, one a half of [g | u]): refused, not read wrongly.
  const Tensor gu = ladder::empty({4, 512}, DType::BF16);
  EXPECT_TRUE(throws_error(
      [&] { ch06::dgated_gemm(dy, wd, g, columns(gu, 256, 256), columns(dgu, 0, 256), columns(dgu, 256, 256), h); },
      "g and u must have one row stride"));
  // Outputs over each other or over an input, which the kernel reads while it writes.
  EXPECT_TRUE(throws_error([&] { ch06::dgated_gemm(dy, wd, g, g, columns(dgu, 0, 256), columns(dgu, 0, 256), h); },
                           "du overlaps dg: an output must share no element with an input or another output"));
  const Tensor over_dgu = ladder::view_of(dgu.data, DType::BF16, {4, 256});  // [dg | du]'s first two rows
  EXPECT_TRUE(
      throws_error([&] { ch06::dgated_gemm(dy, wd, g, g, columns(dgu, 0, 256), columns(dgu, 256, 256), over_dgu); },
                   "h overlaps dg"));
  EXPECT_TRUE(throws_error(
      [&] {
        ch06::dgated_gemm(dy, wd, columns(gu, 0, 256), columns(gu, 256, 256), columns(gu, 0, 256),
                          columns(dgu, 256, 256), h);
      },
      "dg overlaps g"));
  EXPECT_TRUE(throws_error([&] { ch06::dgated_gemm(dy, wd, g, g, columns(dgu, 0, 256), columns(dgu, 256, 256), g); },
                           "h overlaps g"));
  // More tiles than the kernel's 32-bit tile numbers reach (2^23 row blocks x 1024 column blocks): refused before
  // anything runs, so these views may point at nothing.
  const int64_t big_m = int64_t{1} << 30, big_h = int64_t{1} << 17;
  const auto nowhere = [](ladder::Shape shape) {
    return ladder::view_of(reinterpret_cast<void*>(uintptr_t{1} << 20), DType::BF16, shape);
  };
  const Tensor big = nowhere({big_m, big_h});
  try {
    ch06::dgated_gemm(nowhere({big_m, 64}), nowhere({64, big_h}), big, big, big, big, big);
    ADD_FAILURE() << "more than 2^31 tiles were not refused";
  } catch (const ladder::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tiles must be"), std::string::npos) << e.what();
  }
}

}  // namespace
