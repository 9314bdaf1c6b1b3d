// The add kernel on its own, every variant: odd sizes, one row, one column, both dtypes.
#include <gtest/gtest.h>

#include "chapter/compare.h"
#include "gpu/device.h"
#include "kernels.cuh"

using namespace ladder;

TEST(Add, EveryVariantMatchesTheCpu) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA GPU";
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
  if (!gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  const Tensor a = empty({4, 8}, DType::F32), b = empty({7}, DType::F32), y = empty({4, 8}, DType::F32);
  EXPECT_THROW(ch01::add(a, b, y), Error);
  EXPECT_THROW(ch01::add(a, empty({8}, DType::F32), y, "no-such-variant"), UsageError);
}
