// The add kernel on its own, every variant: odd sizes, one row, one column, both dtypes.
#include <gtest/gtest.h>

#include "01_matmul_add/kernels.cuh"
#include "chapter/compare.h"
#include "cuda/check.h"
#include "cuda/tests/require_gpu.h"
#include "gpu/memory.h"
#include "gpu/values.h"

using namespace ladder;

TEST(Add, EveryVariantMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  uint64_t seed = 100;
  for (const auto& v : ch01::add_variants()) {
    for (DType dt : {DType::F32, DType::BF16}) {
      for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
               {1, 1}, {1, 4096}, {4096, 1}, {64, 64}, {7, 13}, {33, 1023}, {4096, 4096}, {3, 5}}) {
        const auto ha = random_values(rows * cols, ++seed, dt), hb = random_values(cols, ++seed, dt);
        const Tensor a = to_device(ha, {rows, cols}, dt), b = to_device(hb, {cols}, dt), y = empty({rows, cols}, dt);
        poison(y);
        ch01::add(a, b, y, v.name);
        std::vector<double> ref(ha.size());
        // The GPU adds in float and rounds once to the output dtype; so does this reference.
        for (int64_t i = 0; i < rows * cols; ++i) ref[i] = round_to(dt, ha[i] + hb[i % cols]);
        const CompareResult r = compare(to_host(y), ref, {0, 0});
        EXPECT_TRUE(r.ok) << v.name << " " << dtype_name(dt) << " " << rows << "x" << cols << "\n" << r.report;
      }
    }
  }
}

TEST(Add, BadShapesAreRefused) {
  SKIP_WITHOUT_GPU();
  const Tensor a = empty({4, 8}, DType::F32), b = empty({7}, DType::F32), y = empty({4, 8}, DType::F32);
  EXPECT_THROW(ch01::add(a, b, y), Error);
  EXPECT_THROW(ch01::add(a, empty({8}, DType::F32), y, "no-such-variant"), UsageError);
}

// Every launcher accepts an empty input (launching nothing) and checks its own launch, like the 03 launchers: here a
// grid too large for one launch must throw from the launcher, not surface in some later CUDA call.
TEST(Add, LaunchersTakeEmptyInputsAndCheckTheirLaunch) {
  SKIP_WITHOUT_GPU();
  for (const auto& v : ch01::add_variants()) {
    for (DType dt : {DType::F32, DType::BF16}) {
      EXPECT_NO_THROW(v.launch(nullptr, nullptr, nullptr, 0, 5, dt, nullptr)) << v.name;
      EXPECT_NO_THROW(v.launch(nullptr, nullptr, nullptr, 5, 0, dt, nullptr)) << v.name;
      EXPECT_EQ(cudaGetLastError(), cudaSuccess) << v.name;
      EXPECT_THROW(v.launch(nullptr, nullptr, nullptr, int64_t{1} << 20, int64_t{1} << 20, dt, nullptr), Error)
          << v.name;
      EXPECT_EQ(cudaGetLastError(), cudaSuccess) << v.name;
    }
  }
  const Tensor e = empty({0, 8}, DType::F32);
  EXPECT_NO_THROW(ch01::add(e, empty({8}, DType::F32), e));
}

TEST(Add, PartialOverlapIsRefused) {
  SKIP_WITHOUT_GPU();
  const Tensor buf = empty({4 * 8 + 1}, DType::F32), b = empty({8}, DType::F32);
  const Tensor a = view_of(buf.data, DType::F32, {4, 8});
  const Tensor shifted = view_of(static_cast<float*>(buf.data) + 1, DType::F32, {4, 8});
  EXPECT_THROW(ch01::add(a, b, shifted), Error);
  EXPECT_NO_THROW(ch01::add(a, b, a));  // in place
  CUDA_CHECK(cudaDeviceSynchronize());
}

// In place is defined (kernels.cuh; the kernels mark no pointer __restrict__): out = a, and, for one row, out = bias
// (the same bytes). Each must match the CPU and the bits of the same add into a separate output.
TEST(Add, InPlaceMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  uint64_t seed = 200;
  for (const auto& v : ch01::add_variants()) {
    for (DType dt : {DType::F32, DType::BF16}) {
      for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 4099}, {7, 13}, {4096, 4096}}) {
        SCOPED_TRACE(std::string(v.name) + " " + dtype_name(dt) + " " + std::to_string(rows) + "x" +
                     std::to_string(cols));
        const auto ha = random_values(rows * cols, ++seed, dt), hb = random_values(cols, ++seed, dt);
        std::vector<double> ref(ha.size());
        for (int64_t i = 0; i < rows * cols; ++i) ref[i] = round_to(dt, ha[i] + hb[i % cols]);
        const Tensor a0 = to_device(ha, {rows, cols}, dt), b0 = to_device(hb, {cols}, dt),
                     want = empty({rows, cols}, dt);
        ch01::add(a0, b0, want, v.name);
        const std::vector<float> want_values = to_host(want);
        const Tensor a = to_device(ha, {rows, cols}, dt), b = to_device(hb, {cols}, dt);
        ch01::add(a, b, a, v.name);  // out = a
        std::vector<const Tensor*> outs = {&a};
        const Tensor a1 = to_device(ha, {rows, cols}, dt), b1 = to_device(hb, {cols}, dt);
        const Tensor b1_as_out = view_of(b1.data, dt, {rows, cols});
        if (rows == 1) {
          ch01::add(a1, b1, b1_as_out, v.name);  // out = bias: one row is the bias's bytes exactly
          outs.push_back(&b1_as_out);
        }
        for (const Tensor* out : outs) {
          const std::vector<float> got = to_host(*out);
          EXPECT_TRUE(got == want_values) << (out == &a ? "out = a" : "out = bias") << ": differs from out of place";
          const CompareResult r = compare(got, ref, {0, 0});
          EXPECT_TRUE(r.ok) << r.report;
        }
      }
    }
  }
}
