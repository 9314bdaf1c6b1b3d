// check_output: the chapters' check of a GPU output against the CPU, which gathers a sample on the GPU and leaves the
// comparison to compare(). Without a GPU every test skips.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "chapter/chapter.h"
#include "gpu/info.h"
#include "gpu/memory.h"
#include "cuda/tests/require_gpu.h"

namespace {

using namespace ladder;

// [M, N] float32 with element (m, n) = m + n / 1000, and a reference that says so.
constexpr int64_t M = 50, N = 30;
std::vector<float> values() {
  std::vector<float> v(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) v[m * N + n] = float(m) + float(n) / 1000;
  return v;
}
void ref_row(int64_t m, const std::vector<int64_t>& cols, double* ref) {
  for (size_t c = 0; c < cols.size(); ++c) ref[c] = double(float(m) + float(cols[c]) / 1000);
}
const OutputSample kSample = {{0, 3, 49}, {0, 5, 29}};  // rows and columns checked

std::string error_of(const std::vector<float>& v) {
  try {
    check_output(to_device(v, {M, N}, DType::F32), M, N, kSample, ref_row, tolerance_for(DType::F32), "test");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CheckOutput, PassesAndSaysWhatItChecked) {
  SKIP_WITHOUT_GPU();
  const std::string line =
      check_output(to_device(values(), {M, N}, DType::F32), M, N, kSample, ref_row, tolerance_for(DType::F32), "t");
  EXPECT_NE(line.find("9 values (3 rows x 3 columns) within atol 1e-05 + rtol 0.0001"), std::string::npos) << line;
  EXPECT_NE(line.find("all 1500 values finite"), std::string::npos) << line;
}

TEST(CheckOutput, NamesAWrongSampledValueByRowAndColumn) {
  SKIP_WITHOUT_GPU();
  std::vector<float> v = values();
  v[3 * N + 5] += 0.5f;
  const std::string what = error_of(v);
  EXPECT_NE(what.find("test: 1 of the 9 values checked differ"), std::string::npos) << what;
  EXPECT_NE(what.find(fmt::format("[{:>8}, {:>8}]  ref", 3, 5)), std::string::npos) << what;
}

TEST(CheckOutput, ANanOutsideTheSampleFails) {
  SKIP_WITHOUT_GPU();
  std::vector<float> v = values();
  v[20 * N + 7] = std::nanf("");  // row 20 is not sampled
  const std::string what = error_of(v);
  EXPECT_NE(what.find("1 of the 1500 values of the whole output are NaN or Inf (the first at [20, 7])"),
            std::string::npos)
      << what;
}

}  // namespace
