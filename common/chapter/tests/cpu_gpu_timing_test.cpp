// The statistic GpuTimer reports, on known values (its GPU side: gpu_timer_test.cpp).
#include <gtest/gtest.h>

#include "chapter/gpu_timer.h"

using namespace ladder;

TEST(GpuTiming, MedianIsTheMiddleRunOrTheMeanOfTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(median_of_sorted({1, 2, 9}), 2);
  EXPECT_DOUBLE_EQ(median_of_sorted({1, 2, 4, 9}), 3);
  EXPECT_DOUBLE_EQ(median_of_sorted({5}), 5);
  EXPECT_DOUBLE_EQ(median_of_sorted({}), 0);
  const GpuTiming t{{10, 11, 12, 100}};
  EXPECT_EQ(t.runs(), 4);
  EXPECT_DOUBLE_EQ(t.median_us(), 11.5);
  EXPECT_DOUBLE_EQ(t.min_us(), 10);
}
