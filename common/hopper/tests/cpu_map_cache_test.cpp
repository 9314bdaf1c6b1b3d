// CPU tests of the cache that keeps each problem's tensor maps (map_cache.h): its key tells every field apart, and it
// builds once per key and forgets the oldest when full.
#include <gtest/gtest.h>

#include "hopper/map_cache.h"

namespace {

TEST(MapCache, ProblemKeyTellsEveryFieldApart) {
  const hopper::ProblemKey base{0, &base, &base + 1, &base + 2, &base + 3, 8192, 768, 3072, 128, 128, 64};
  EXPECT_EQ(base, base);
  for (int field = 0; field < 11; ++field) {
    hopper::ProblemKey k = base;
    switch (field) {
      case 0:
        k.device = 1;
        break;
      case 1:
        k.x = nullptr;
        break;
      case 2:
        k.w_gate = nullptr;
        break;
      case 3:
        k.w_up = nullptr;
        break;
      case 4:
        k.m = nullptr;
        break;
      case 5:
        k.M = 8191;
        break;
      case 6:
        k.dim = 776;
        break;
      case 7:
        k.hidden = 3080;
        break;
      case 8:
        k.x_rows = 64;
        break;
      case 9:
        k.w_rows = 64;
        break;
      case 10:
        k.m_rows = 128;
        break;
    }
    EXPECT_NE(k, base) << "field " << field;
  }
}

TEST(MapCache, SmallCacheBuildsOncePerKeyAndForgetsTheOldest) {
  hopper::SmallCache<int, int, 3> cache;
  int builds = 0;
  const auto get = [&](int key) { return cache.get(key, [&] { return ++builds, key * 10; }); };
  EXPECT_EQ(get(1), 10);
  EXPECT_EQ(get(1), 10);
  EXPECT_EQ(builds, 1);  // the second call remembered
  EXPECT_EQ(get(2), 20);
  EXPECT_EQ(get(3), 30);
  EXPECT_EQ(builds, 3);
  EXPECT_EQ(cache.size(), 3);
  EXPECT_EQ(get(4), 40);  // full: replaces 1, the oldest
  EXPECT_EQ(cache.size(), 3);
  EXPECT_EQ(get(2), 20);
  EXPECT_EQ(get(3), 30);
  EXPECT_EQ(builds, 4);
  EXPECT_EQ(get(1), 10);  // forgotten: built again
  EXPECT_EQ(builds, 5);
  EXPECT_EQ(cache.builds(), 5);
  // A build that throws remembers nothing.
  EXPECT_THROW(cache.get(7, []() -> int { throw 1; }), int);
  EXPECT_EQ(get(7), 70);
  EXPECT_EQ(builds, 6);
}

}  // namespace
