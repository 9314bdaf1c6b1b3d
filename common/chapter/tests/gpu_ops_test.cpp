// Every op against the float64 CPU reference, on fresh random inputs, for several shapes, odd ones included.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "chapter/compare.h"
#include "chapter/reference.h"
#include "cuda/check.h"
#include "cuda/tests/require_gpu.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/stream.h"
#include "gpu/values.h"

using namespace ladder;

namespace {

struct Case {
  int64_t M, K, N;
  DType dt;
};
std::string case_name(const Case& c) {
  return std::string(dtype_name(c.dt)) + "_M" + std::to_string(c.M) + "_K" + std::to_string(c.K) + "_N" +
         std::to_string(c.N);
}
// How GoogleTest prints a parameter in its output (and so in ctest's test names).
void PrintTo(const Case& c, std::ostream* os) { *os << case_name(c); }
std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (DType dt : {DType::BF16, DType::F32}) {
    for (auto [M, K, N] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {1, 32, 64}, {1024, 32, 64}, {7, 13, 5}, {33, 64, 17}, {1, 1, 1}, {5, 8, 1}, {256, 768, 3072}, {3, 9, 8},
             {3, 8, 9}}) {
      cases.push_back({M, K, N, dt});
    }
  }
  return cases;
}

// Runs op() on a poisoned output; returns true if it ran, false if it refused with the alignment message.
template <class Op>
bool run_or_refused(const Case& c, DType dt, Op op) {
  try {
    op();
    CUDA_CHECK(cudaDeviceSynchronize());
    return true;
  } catch (const Error& e) {
    const std::string msg = e.what();
    // A refusal is only acceptable for bf16 with K or N off the 8-element (16-byte) grid, and must say so.
    EXPECT_TRUE(dt == DType::BF16 && (c.K % 8 || c.N % 8)) << msg;
    EXPECT_NE(msg.find("not on 16-byte boundaries"), std::string::npos) << msg;
    return false;
  }
}

uint64_t fresh_seed() {
  static uint64_t s = 0x5eed;
  return ++s * 7919;
}

}  // namespace

class OpsTest : public ::testing::TestWithParam<Case> {};

TEST_P(OpsTest, LinearWithBiasIsOneAddmm) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const DType dt = c.dt;
  const auto hx = random_values(c.M * c.K, fresh_seed(), dt), hw = random_values(c.N * c.K, fresh_seed(), dt),
             hb = random_values(c.N, fresh_seed(), dt);
  const Tensor x = to_device(hx, {c.M, c.K}, dt), W = to_device(hw, {c.N, c.K}, dt), b = to_device(hb, {c.N}, dt);
  const Tensor y = empty({c.M, c.N}, dt);
  poison(y);
  if (!run_or_refused(c, dt, [&] { ops::linear(x, W, &b, y); })) return;
  const CompareResult r = compare(to_host(y), ref::linear(hx, hw, hb, c.M, c.K, c.N), tolerance_for(dt, c.K));
  EXPECT_TRUE(r.ok) << r.report;
}

// Also under a GemmSmLimit (07_tp_mlp's overlap leaves SMs to NCCL with one): cuBLASLt gets
// CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET and may pick another kernel; the result is still the op's.
TEST_P(OpsTest, LinearWithoutBiasTakesTheMmPath) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const DType dt = c.dt;
  const auto hx = random_values(c.M * c.K, fresh_seed(), dt), hw = random_values(c.N * c.K, fresh_seed(), dt);
  const Tensor x = to_device(hx, {c.M, c.K}, dt), W = to_device(hw, {c.N, c.K}, dt);
  const Tensor y = empty({c.M, c.N}, dt);
  for (int sms : {0, 7}) {
    SCOPED_TRACE("GEMM SM limit " + std::to_string(sms));
    const GemmSmLimit limit(sms);
    poison(y);
    if (!run_or_refused(c, dt, [&] { ops::linear(x, W, nullptr, y); })) return;
    const CompareResult r = compare(to_host(y), ref::linear(hx, hw, {}, c.M, c.K, c.N), tolerance_for(dt, c.K));
    EXPECT_TRUE(r.ok) << r.report;
  }
}

TEST_P(OpsTest, MatmulAndAddmmOfRowMajorTensors) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const DType dt = c.dt;
  const auto ha = random_values(c.M * c.K, fresh_seed(), dt), hb = random_values(c.K * c.N, fresh_seed(), dt),
             hbias = random_values(c.N, fresh_seed(), dt);
  const Tensor a = to_device(ha, {c.M, c.K}, dt), b = to_device(hb, {c.K, c.N}, dt), bias = to_device(hbias, {c.N}, dt);
  const Tensor y = empty({c.M, c.N}, dt);
  poison(y);
  if (run_or_refused(c, dt, [&] { ops::matmul(a, b, y); })) {
    const CompareResult r = compare(to_host(y), ref::matmul(ha, hb, {}, c.M, c.K, c.N), tolerance_for(dt, c.K));
    EXPECT_TRUE(r.ok) << "matmul: " << r.report;
  }
  poison(y);
  if (run_or_refused(c, dt, [&] { ops::addmm(bias, a, b, y); })) {
    const CompareResult r = compare(to_host(y), ref::matmul(ha, hb, hbias, c.M, c.K, c.N), tolerance_for(dt, c.K));
    EXPECT_TRUE(r.ok) << "addmm: " << r.report;
  }
}

TEST_P(OpsTest, MatmulOfA3dInputReshapesToRows) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const DType dt = c.dt;
  const int64_t batch = 2;
  const auto hx = random_values(batch * c.M * c.K, fresh_seed(), dt), hw = random_values(c.N * c.K, fresh_seed(), dt);
  const Tensor x = to_device(hx, {batch, c.M, c.K}, dt), W = to_device(hw, {c.N, c.K}, dt);
  const Tensor y = empty({batch, c.M, c.N}, dt);
  poison(y);
  if (!run_or_refused(c, dt, [&] { ops::linear(x, W, nullptr, y); })) return;
  const CompareResult r =
      compare(to_host(y), ref::linear(hx, hw, {}, batch * c.M, c.K, c.N), tolerance_for(dt, c.K));
  EXPECT_TRUE(r.ok) << r.report;
}

INSTANTIATE_TEST_SUITE_P(Shapes, OpsTest, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return case_name(info.param); });

TEST(Ops, ShapeMismatchIsAClearError) {
  SKIP_WITHOUT_GPU();
  const Tensor a = empty({4, 8}, DType::BF16), b = empty({9, 8}, DType::BF16), y = empty({4, 8}, DType::BF16);
  try {
    ops::mm(a, b, y);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shapes do not fit"), std::string::npos) << e.what();
  }
}

TEST(Device, TooLargeIsAClearErrorNotACrash) {
  SKIP_WITHOUT_GPU();
  try {
    empty({int64_t{1} << 40, 1024}, DType::BF16);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GiB free"), std::string::npos) << e.what();
  }
  // And the GPU is still usable afterwards.
  EXPECT_NO_THROW(to_host(to_device({1.0f, 2.0f}, {2}, DType::F32)));
}

TEST(Device, PoisonIsNaNInBothDtypes) {
  SKIP_WITHOUT_GPU();
  for (DType dt : {DType::F32, DType::BF16}) {
    const Tensor t = empty({5}, dt);
    poison(t);
    for (float v : to_host(t)) EXPECT_TRUE(std::isnan(v));
  }
}

// A view that starts 2 bytes into its buffer (torch: x[:, 1:] and the like): cuBLASLt must be told the real alignment,
// or it may pick a kernel whose 16-byte loads fault or read the wrong bytes.
TEST(Ops, OffsetViewsGetTheirRealAlignment) {
  SKIP_WITHOUT_GPU();
  for (DType dt : {DType::BF16, DType::F32}) {
    const int64_t M = 64, K = 64, N = 128;
    const auto hx = random_values(M * K + 1, fresh_seed(), dt), hw = random_values(N * K + 1, fresh_seed(), dt),
               hb = random_values(N + 1, fresh_seed(), dt);
    const Tensor xbuf = to_device(hx, {M * K + 1}, dt), wbuf = to_device(hw, {N * K + 1}, dt),
                 bbuf = to_device(hb, {N + 1}, dt), ybuf = empty({M * N + 1}, dt);
    const size_t es = dtype_size(dt);
    auto offset = [&](const Tensor& buf, Shape shape) {
      return view_of(static_cast<char*>(buf.data) + es, dt, std::move(shape));
    };
    const Tensor x = offset(xbuf, {M, K}), W = offset(wbuf, {N, K}), y = offset(ybuf, {M, N});
    const std::vector<float> x0(hx.begin() + 1, hx.end()), w0(hw.begin() + 1, hw.end());
    for (bool bias : {false, true}) {
      poison(ybuf);
      const Tensor b = offset(bbuf, {N});
      std::vector<float> b0;
      if (bias) b0.assign(hb.begin() + 1, hb.end());
      ASSERT_NO_THROW({
        ops::linear(x, W, bias ? &b : nullptr, y);
        CUDA_CHECK(cudaDeviceSynchronize());
      }) << dtype_name(dt);
      const std::vector<float> got = to_host(ybuf);
      const CompareResult r = compare(std::vector<float>(got.begin() + 1, got.end()), ref::linear(x0, w0, b0, M, K, N),
                                      tolerance_for(dt, K));
      EXPECT_TRUE(r.ok) << dtype_name(dt) << (bias ? " with bias" : "") << "\n" << r.report;
    }
  }
}

// Empty dims, like torch: M = 0 or N = 0 computes nothing; K = 0 is a sum of no terms: zeros, or the bias.
TEST(Ops, ZeroSizedDims) {
  SKIP_WITHOUT_GPU();
  for (DType dt : {DType::BF16, DType::F32}) {
    EXPECT_NO_THROW(ops::mm(empty({0, 16}, dt), empty({16, 8}, dt), empty({0, 8}, dt)));
    EXPECT_NO_THROW(ops::mm(empty({4, 16}, dt), empty({16, 0}, dt), empty({4, 0}, dt)));
    EXPECT_NO_THROW(ops::addmm(empty({0}, dt), empty({4, 16}, dt), empty({16, 0}, dt), empty({4, 0}, dt)));
    const Tensor y = empty({5, 3}, dt);
    poison(y);
    ASSERT_NO_THROW(ops::mm(empty({5, 0}, dt), empty({0, 3}, dt), y));
    for (float v : to_host(y)) EXPECT_EQ(v, 0.0f);
    const auto hb = random_values(3, fresh_seed(), dt);
    poison(y);
    ASSERT_NO_THROW(ops::addmm(to_device(hb, {3}, dt), empty({5, 0}, dt), empty({0, 3}, dt), y));
    const auto got = to_host(y);
    for (int64_t i = 0; i < 15; ++i) EXPECT_EQ(got[i], hb[i % 3]) << i;
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
}

// The GEMMs share one cuBLASLt workspace, so a GEMM on a stream other than the default one (or one capturing a graph)
// is refused rather than run concurrently with another.
TEST(Ops, GemmOnASecondStreamIsRefused) {
  SKIP_WITHOUT_GPU();
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  set_current_stream(s);
  const Tensor a = empty({8, 8}, DType::BF16), b = empty({8, 8}, DType::BF16), y = empty({8, 8}, DType::BF16);
  try {
    ops::mm(a, b, y);
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("workspace"), std::string::npos) << e.what();
  }
  set_current_stream(nullptr);
  CUDA_CHECK(cudaStreamDestroy(s));
  // A graph capture on its own stream still works: it records, and the graph replays on the default stream.
  EXPECT_NO_THROW({
    CudaGraph g([&] { ops::mm(a, b, y); });
    g.launch();
    CUDA_CHECK(cudaDeviceSynchronize());
  });
}

// Inputs made on the GPU are exactly the values the host recomputes.
TEST(Device, RandomTensorIsRandomValuesBitForBit) {
  SKIP_WITHOUT_GPU();
  for (DType dt : {DType::F32, DType::BF16}) {
    const int64_t n = 1000003;
    EXPECT_EQ(to_host(random_tensor({n}, 42, dt, -3.0f, 0.5f)), random_values(n, 42, dt, -3.0f, 0.5f))
        << dtype_name(dt);
    EXPECT_EQ(random_tensor({0, 5}, 1, dt).numel(), 0);
  }
}

TEST(Device, NonFiniteCountAndGather) {
  SKIP_WITHOUT_GPU();
  for (DType dt : {DType::F32, DType::BF16}) {
    std::vector<float> v(100000, 1.0f);
    for (int64_t i = 0; i < 100000; ++i) v[i] = float(i % 200);  // exact in bf16 too
    v[77777] = std::nanf("");
    v[99999] = INFINITY;
    const Tensor t = to_device(v, {100000}, dt);
    const NonFinite nf = count_nonfinite(t);
    EXPECT_EQ(nf.count, 2);
    EXPECT_EQ(nf.first, 77777);
    EXPECT_EQ(values_at(t, {0, 999, 1500, 99998}), (std::vector<float>{0, 199, 100, 198}));
    poison(t);
    EXPECT_EQ(count_nonfinite(t).count, 100000);
  }
}
