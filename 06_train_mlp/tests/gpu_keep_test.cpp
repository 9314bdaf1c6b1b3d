// GPU tests of the epilogue mode's forward GEMM (geglu_gemm_keep.cu): h = gelu(x @ W_gate^T) * (x @ W_up^T), with g
// and u kept for the backward. Skipped without a GPU, and on a GPU or build it cannot run on (it says why).
//
// What is checked, at odd and at the blog's shapes:
//  - h bit for bit what chapter 04's geglu_gemm (its `fast` variant) makes from the same inputs;
//  - g and u against a float64 CPU reference on sampled rows;
//  - every element of h, g and u finite (they start as NaN, so an element the kernel does not write fails), and the
//    elements after each output untouched;
//  - its refusals, each by its message (outputs over an input or over each other among them).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "04_epilogue_mlp/kernels.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/reference.h"
#include "chapter/compare.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/tests/kernel_test_util.h"
#include "gpu/values.h"
#include "hopper/launch.h"

namespace {

using ladder::DType;
using ladder::Tensor;
using namespace ladder::testing;

double bf(double v) { return ladder::round_to(DType::BF16, static_cast<float>(v)); }

// Empty when geglu_gemm_keep runs here, else why not.
std::string cannot_run() {
  const hopper::DeviceInfo& gpu = hopper::current_device();
  return ch06::dgated_gemm_cannot_run(gpu.major, gpu.minor, 8, 8);
}

TEST(GegluGemmKeep, MatchesGegluGemmAndTheCpuReference) {
  SKIP_WITHOUT_GPU();
  if (const std::string why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
  for (auto [M, dim, hidden] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 256},
                                {37, 24, 8},     // one k-tile, part of one column block
                                {130, 72, 264},  // 2 rows and 72 columns past whole 128 x 96 tiles
                                {2107, 768, 3072},
                                {1999, 200, 2056},  // 40 columns past whole tiles
                                {8192, 768, 3072}}) {
    SCOPED_TRACE("M " + std::to_string(M) + ", dim " + std::to_string(dim) + ", hidden " + std::to_string(hidden));
    const uint64_t seed = 700 + M + dim + hidden;
    const float bw = 1.0f / std::sqrt(float(dim));
    const std::vector<float> hx = ladder::random_values(M * dim, seed, DType::BF16);
    const std::vector<float> hg = ladder::random_values(hidden * dim, seed + 1, DType::BF16, -bw, bw);
    const std::vector<float> hu = ladder::random_values(hidden * dim, seed + 2, DType::BF16, -bw, bw);
    const Tensor x = ladder::to_device(hx, {M, dim}, DType::BF16);
    const Tensor w_gate = ladder::to_device(hg, {hidden, dim}, DType::BF16),
                 w_up = ladder::to_device(hu, {hidden, dim}, DType::BF16);
    const GuardedOutput h({M, hidden}), g({M, hidden}), u({M, hidden});
    for (const GuardedOutput* o : {&h, &g, &u}) o->poison();
    ch06::geglu_gemm_keep(x, w_gate, w_up, h.view, g.view, u.view);
    const Tensor h04 = ladder::empty({M, hidden}, DType::BF16);
    ch04::geglu_gemm(x, w_gate, w_up, h04, "fast");
    CUDA_CHECK(cudaDeviceSynchronize());

    EXPECT_EQ(bits_of(h.view.data, M * hidden), bits_of(h04.data, M * hidden)) << "h differs from geglu_gemm's";
    for (const GuardedOutput* o : {&h, &g, &u}) EXPECT_TRUE(o->guard_untouched()) << "written past the output's end";
    const std::vector<float> got_h = ladder::to_host(h.view), got_g = ladder::to_host(g.view),
                             got_u = ladder::to_host(u.view);
    int64_t nonfinite = 0;
    for (const std::vector<float>* v : {&got_h, &got_g, &got_u})
      for (float e : *v) nonfinite += !std::isfinite(e);
    EXPECT_EQ(nonfinite, 0) << "elements of h, g or u are NaN or Inf (unwritten)";

    std::vector<float> got;
    std::vector<double> ref;
    for (int64_t m : ch06::evenly(M, 16)) {
      for (int64_t j = 0; j < hidden; ++j) {
        double sg = 0, su = 0;
        for (int64_t k = 0; k < dim; ++k) {
          sg += double(hx[m * dim + k]) * hg[j * dim + k];
          su += double(hx[m * dim + k]) * hu[j * dim + k];
        }
        ref.push_back(bf(sg));
        ref.push_back(bf(su));
        got.push_back(got_g[m * hidden + j]);
        got.push_back(got_u[m * hidden + j]);
      }
    }
    const auto r = ladder::compare(got, ref, ladder::tolerance_for(DType::BF16));
    EXPECT_TRUE(r.ok) << r.mismatches << " of " << r.checked << " g and u values differ\n" << r.report;
  }
}

TEST(GegluGemmKeep, RefusesBadTensors) {
  SKIP_WITHOUT_GPU();
  if (const std::string why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
  const Tensor x = ladder::empty({4, 64}, DType::BF16), w = ladder::empty({256, 64}, DType::BF16);
  const Tensor h = ladder::empty({4, 256}, DType::BF16), g = ladder::empty({4, 256}, DType::BF16),
               u = ladder::empty({4, 256}, DType::BF16), buffer = ladder::empty({4 * 256 + 8}, DType::BF16);
  // Each refusal by its message, so that a test cannot pass on another refusal than the one it means.
  const Tensor shifted = ladder::view_of(buffer.ptr<bf16>() + 1, DType::BF16, {4, 256});  // 2 bytes past 16
  EXPECT_TRUE(throws_error([&] { ch06::geglu_gemm_keep(x, w, w, h, shifted, u); }, "g is not 16-byte aligned"));
  const Tensor over_x = ladder::view_of(x.data, DType::BF16, {4, 256});  // g written over x, which the GEMM reads
  EXPECT_TRUE(throws_error([&] { ch06::geglu_gemm_keep(x, w, w, h, over_x, u); }, "g overlaps x"));
  // Outputs over each other: the same tensor twice, and g's last row over u's first.
  EXPECT_TRUE(throws_error([&] { ch06::geglu_gemm_keep(x, w, w, h, g, h); }, "h overlaps u"));
  const Tensor gu = ladder::empty({7, 256}, DType::BF16);
  const Tensor g_top = ladder::view_of(gu.data, DType::BF16, {4, 256}),
               u_bottom = ladder::view_of(gu.ptr<bf16>() + 3 * 256, DType::BF16, {4, 256});
  EXPECT_TRUE(throws_error([&] { ch06::geglu_gemm_keep(x, w, w, h, g_top, u_bottom); }, "g overlaps u"));
  const Tensor x12 = ladder::empty({4, 12}, DType::BF16), w12 = ladder::empty({256, 12}, DType::BF16);
  EXPECT_TRUE(throws_error([&] { ch06::geglu_gemm_keep(x12, w12, w12, h, g, u); }, "multiples of 8"));
}

}  // namespace
