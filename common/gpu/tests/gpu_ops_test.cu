// Every op against the float64 CPU reference, on fresh random inputs, for several shapes, odd ones included.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>

#include <tuple>

#include "gpu/check.h"
#include "chapter/compare.h"
#include "gpu/device.h"
#include "gpu/ops.h"
#include "chapter/reference.h"

using namespace ladder;

namespace {

#define REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no CUDA GPU"

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
    EXPECT_NE(msg.find("multiples of 8"), std::string::npos) << msg;
    return false;
  }
}

uint64_t fresh_seed() {
  static uint64_t s = 0x5eed;
  return ++s * 7919;
}

}  // namespace

class OpsTest : public testing::TestWithParam<Case> {};

TEST_P(OpsTest, LinearWithBiasIsOneAddmm) {
  REQUIRE_GPU();
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

TEST_P(OpsTest, LinearWithoutBiasTakesTheMmPath) {
  REQUIRE_GPU();
  const Case c = GetParam();
  const DType dt = c.dt;
  const auto hx = random_values(c.M * c.K, fresh_seed(), dt), hw = random_values(c.N * c.K, fresh_seed(), dt);
  const Tensor x = to_device(hx, {c.M, c.K}, dt), W = to_device(hw, {c.N, c.K}, dt);
  const Tensor y = empty({c.M, c.N}, dt);
  poison(y);
  if (!run_or_refused(c, dt, [&] { ops::linear(x, W, nullptr, y); })) return;
  const CompareResult r = compare(to_host(y), ref::linear(hx, hw, {}, c.M, c.K, c.N), tolerance_for(dt, c.K));
  EXPECT_TRUE(r.ok) << r.report;
}

TEST_P(OpsTest, MatmulAndAddmmOfRowMajorTensors) {
  REQUIRE_GPU();
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
  REQUIRE_GPU();
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

INSTANTIATE_TEST_SUITE_P(Shapes, OpsTest, testing::ValuesIn(all_cases()),
                         [](const auto& info) { return case_name(info.param); });

TEST(Ops, ShapeMismatchIsAClearError) {
  REQUIRE_GPU();
  const Tensor a = empty({4, 8}, DType::BF16), b = empty({9, 8}, DType::BF16), y = empty({4, 8}, DType::BF16);
  try {
    ops::mm(a, b, y);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shapes do not fit"), std::string::npos) << e.what();
  }
}

TEST(Device, TooLargeIsAClearErrorNotACrash) {
  REQUIRE_GPU();
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
  REQUIRE_GPU();
  for (DType dt : {DType::F32, DType::BF16}) {
    const Tensor t = empty({5}, dt);
    poison(t);
    for (float v : to_host(t)) EXPECT_TRUE(std::isnan(v));
  }
}
