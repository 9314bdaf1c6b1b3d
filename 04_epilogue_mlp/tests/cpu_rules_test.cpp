// CPU tests of chapter 04's rules, the words the chapter prints before any GPU work: a shape TMA cannot tile, and a
// GPU that is not a Hopper.
#include <gtest/gtest.h>

#include <string>

#include "04_epilogue_mlp/kernels.cuh"

namespace {

bool has(const std::string& text, const std::string& words) { return text.find(words) != std::string::npos; }

TEST(EpilogueRules, DimAndHiddenMustBeMultiplesOf8) {
  EXPECT_EQ(ch04::tma_shape_rule(768, 3072), "");
  EXPECT_EQ(ch04::tma_shape_rule(8, 8), "");
  const std::string dim = ch04::tma_shape_rule(100, 3072), hidden = ch04::tma_shape_rule(768, 3070);
  EXPECT_TRUE(has(dim, "dim = 100 is not a multiple of 8: TMA needs every row of x")) << dim;
  EXPECT_TRUE(has(hidden, "hidden = 3070 is not a multiple of 8: TMA needs every row of m")) << hidden;
  EXPECT_TRUE(has(hidden, "16-byte boundary")) << hidden;
}

TEST(EpilogueRules, OnlyHopperRunsTheKernels) {
  EXPECT_EQ(ch04::hopper_only(9, 0), "");
  for (auto [major, minor] : {std::pair{8, 0}, {8, 9}, {10, 0}, {12, 0}}) {
    const std::string why = ch04::hopper_only(major, minor);
    EXPECT_TRUE(has(why, "this rung needs a Hopper GPU")) << why;
    EXPECT_TRUE(has(why, "sm_" + std::to_string(major) + std::to_string(minor))) << why;
    EXPECT_TRUE(has(why, "h100/04_epilogue_mlp.json")) << why;  // where our trace is
  }
}

}  // namespace
