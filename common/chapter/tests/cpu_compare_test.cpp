// The checker must catch what careless checkers let through: NaN, Inf, unwritten (poisoned) outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/error.h"
#include "chapter/compare.h"
#include "gpu/tensor.h"

using namespace ladder;

TEST(Compare, AcceptsValuesWithinTolerance) {
  const CompareResult r = compare({1.0f, 2.001f, -3.0f}, {1.0, 2.0, -3.0}, {1e-3, 1e-3});
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_EQ(r.checked, 3);
  EXPECT_EQ(r.mismatches, 0);
}

TEST(Compare, RejectsAValueOutsideTolerance) {
  const CompareResult r = compare({1.0f, 2.1f}, {1.0, 2.0}, {1e-3, 1e-3});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.report.find("1"), std::string::npos);  // names the index
}

TEST(Compare, NaNFailsEvenWithHugeTolerance) {
  const CompareResult r = compare({std::nanf("")}, {0.0}, {1e30, 1e30});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
}

TEST(Compare, InfFailsEvenWhenTheReferenceIsHuge) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(compare({inf}, {1e300}, {1e30, 1e30}).ok);
  EXPECT_FALSE(compare({-inf}, {-1e300}, {1e30, 1e30}).ok);
}

TEST(Compare, UnwrittenPoisonedOutputFails) {
  // poison() fills outputs with 0xFF bytes; read back, bf16 0xFFFF and float32 0xFFFFFFFF are NaN.
  const float bf16_poison = bf16_bits_to_float(0xFFFF);
  std::vector<float> got = {1.0f, bf16_poison, 3.0f};
  const CompareResult r = compare(got, {1.0, 2.0, 3.0}, tolerance_for(DType::BF16));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
}

TEST(Compare, SizeMismatchFails) {
  EXPECT_FALSE(compare({1.0f}, {1.0, 2.0}, {1, 1}).ok);
}

TEST(Compare, ReportListsAtMostMaxRows) {
  std::vector<float> got(100, 5.0f);
  std::vector<double> ref(100, 0.0);
  const CompareResult r = compare(got, ref, {1e-3, 0}, 3);
  EXPECT_EQ(r.mismatches, 100);
  int rows = 0;
  for (size_t p = r.report.find("index"); p != std::string::npos; p = r.report.find("index", p + 1)) ++rows;
  EXPECT_EQ(rows, 3);
  EXPECT_THROW(require_match(r, "test"), Error);
}

// How check_output names an element of its sample: the report says where, not which index of the sample.
TEST(Compare, ReportNamesElementsByWhere) {
  const CompareResult r = compare({1.0f, 2.0f, 9.0f, 4.0f}, {1.0, 2.0, 3.0, 4.0}, {1e-3, 0}, 5, [](int64_t i) {
    return "[row " + std::to_string(i / 2) + ", column " + std::to_string(i % 2) + "]";
  });
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.report.find("[row 1, column 0]"), std::string::npos) << r.report;
  EXPECT_EQ(r.report.find("index"), std::string::npos) << r.report;
}

TEST(CompareRows, ChecksASampleButEveryElementMustBeFinite) {
  const int64_t M = 1000, N = 4;
  std::vector<float> got(M * N, 1.0f);
  auto ref_row = [](int64_t, double* out) {
    for (int j = 0; j < 4; ++j) out[j] = 1.0;
  };
  EXPECT_TRUE(compare_rows(got, M, N, ref_row, {1e-6, 0}, 10).ok);
  got[501 * N + 2] = std::nanf("");  // row 501 is not among the 10 sampled rows
  const CompareResult r = compare_rows(got, M, N, ref_row, {1e-6, 0}, 10);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.report.find("NaN or Inf"), std::string::npos);
  got[501 * N + 2] = 1.0f;
  got[999 * N] = 7.0f;  // the last row is always sampled
  EXPECT_FALSE(compare_rows(got, M, N, ref_row, {1e-6, 0}, 10).ok);
}

TEST(Tolerance, Bf16IsLooserThanFloat32) {
  EXPECT_GT(tolerance_for(DType::BF16).rtol, tolerance_for(DType::F32).rtol);
  EXPECT_GT(tolerance_for(DType::F32, 4096).atol, tolerance_for(DType::F32, 1).atol);
}

// The figures compare.h states, which the chapters print after "check:".
TEST(Tolerance, IsWhatTheHeaderSays) {
  EXPECT_DOUBLE_EQ(tolerance_for(DType::F32).atol, 1e-5);
  EXPECT_DOUBLE_EQ(tolerance_for(DType::F32).rtol, 1e-4);
  EXPECT_DOUBLE_EQ(tolerance_for(DType::F32, 4096).atol, 1e-5 * 64);  // sqrt(K)
  EXPECT_DOUBLE_EQ(tolerance_for(DType::F32, 4096).rtol, 1e-4);
  EXPECT_DOUBLE_EQ(tolerance_for(DType::BF16, 4096).atol, 1e-2);  // whatever K
  EXPECT_DOUBLE_EQ(tolerance_for(DType::BF16, 4096).rtol, 1.6e-2);
}

TEST(SampleOutput, EveryElementWhenCheapElseABoundedSpreadIncludingTheEdges) {
  const OutputSample all = sample_output(1024, 64, 32, 32);
  EXPECT_EQ(all.size(), 1024 * 64);
  // 02_linear at 100000 x 100000 x 100000: a few hundred elements, first and last row and column included.
  const int64_t n = 100000;
  const OutputSample s = sample_output(n, n, n, n);
  EXPECT_EQ(s.rows.size(), 64u);
  EXPECT_GE(s.cols.size(), 1u);
  EXPECT_EQ(s.rows.front(), 0);
  EXPECT_EQ(s.rows.back(), n - 1);
  EXPECT_EQ(s.cols.front(), 0);
  if (s.cols.size() > 1) {
    EXPECT_EQ(s.cols.back(), n - 1);
  }
  EXPECT_LE(double(s.rows.size()) * n + double(s.size()) * n, 1e8 * 1.01);
  // A row whose reference costs more than the budget: still one row, every column.
  const OutputSample one = sample_output(8192, 768, 1e10, 0);
  EXPECT_EQ(one.rows.size(), 1u);
  EXPECT_EQ(one.cols.size(), 768u);
}
