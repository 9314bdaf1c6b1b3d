// CPU tests of chapter 04's rules, the words the chapter prints before any GPU work (a shape the kernels cannot take,
// a GPU a variant does not run on, which variant runs by default) and the overlap rule.
#include <gtest/gtest.h>

#include <string>

#include "04_epilogue_mlp/kernels.cuh"

namespace {

bool has(const std::string& text, const std::string& words) { return text.find(words) != std::string::npos; }

TEST(EpilogueRules, DimAndHiddenMustBeMultiplesOf8) {
  EXPECT_EQ(ch04::geglu_gemm_shape_rule(768, 3072), "");
  EXPECT_EQ(ch04::geglu_gemm_shape_rule(8, 8), "");
  const std::string dim = ch04::geglu_gemm_shape_rule(100, 3072), hidden = ch04::geglu_gemm_shape_rule(768, 3070);
  EXPECT_TRUE(has(dim, "dim = 100 is not a multiple of 8: the kernels copy 16 bytes at a time (TMA, cp.async)")) << dim;
  EXPECT_TRUE(has(dim, "every row of x, w_gate and w_up must start on a 16-byte boundary")) << dim;
  EXPECT_TRUE(has(hidden, "hidden = 3070 is not a multiple of 8")) << hidden;
  EXPECT_TRUE(has(hidden, "every row of m must start")) << hidden;
}

TEST(EpilogueRules, WhichGpuRunsWhichVariant) {
  for (const ch04::GegluGemmVariant& v : ch04::geglu_gemm_variants()) {
    SCOPED_TRACE(v.name);
    EXPECT_EQ(ch04::geglu_gemm_cannot_run(v.name, 9, 0), "");  // every variant runs on an H100
    const std::string old = ch04::geglu_gemm_cannot_run(v.name, 7, 5);
    EXPECT_TRUE(has(old, "sm_75")) << old;
    const bool hopper = std::string(v.name) != "portable";
    for (auto [major, minor] : {std::pair{8, 0}, {8, 6}, {8, 9}, {10, 0}, {12, 0}}) {
      const std::string why = ch04::geglu_gemm_cannot_run(v.name, major, minor);
      if (!hopper) {
        EXPECT_EQ(why, "") << "portable runs on sm_" << major << minor;
        continue;
      }
      EXPECT_TRUE(has(why, std::string("the ") + v.name + " variant needs a Hopper GPU")) << why;
      EXPECT_TRUE(has(why, "sm_" + std::to_string(major) + std::to_string(minor))) << why;
      EXPECT_TRUE(has(why, "--kernel portable runs here")) << why;
      EXPECT_TRUE(has(why, "h100/04_epilogue_mlp.json")) << why;  // where our trace is
    }
  }
  EXPECT_THROW(ch04::geglu_gemm_cannot_run("fastest", 9, 0), ladder::UsageError);
}

TEST(EpilogueRules, DefaultVariant) {
  EXPECT_STREQ(ch04::geglu_gemm_default_variant(9, 0), LADDER_HAVE_SM90A ? "fast" : "portable");
  for (auto [major, minor] : {std::pair{8, 0}, {8, 6}, {8, 9}, {10, 0}, {12, 0}})
    EXPECT_STREQ(ch04::geglu_gemm_default_variant(major, minor), "portable");
  // The list holds exactly what this build compiled: the Hopper variants only with sm_90a code, portable always last.
  const auto& variants = ch04::geglu_gemm_variants();
  ASSERT_FALSE(variants.empty());
  EXPECT_STREQ(variants.back().name, "portable");
  EXPECT_EQ(variants.size(), LADDER_HAVE_SM90A ? 6u : 1u);
}

TEST(EpilogueRules, OutputMustNotOverlapAnInput) {
  // x: 4 x 64 bf16 (512 bytes) at 0x10000; w_gate, w_up: 8 x 64 (1024 bytes) at 0x20000 and 0x30000; m: 4 x 8.
  const auto p = [](uintptr_t a) { return reinterpret_cast<const void*>(a); };
  const void *x = p(0x10000), *wg = p(0x20000), *wu = p(0x30000);
  const auto rule = [&](uintptr_t m) { return ch04::geglu_gemm_overlap_rule(x, wg, wu, p(m), 4, 64, 8); };
  EXPECT_EQ(rule(0x40000), "");
  EXPECT_EQ(rule(0x10000 + 512), "");   // right after x
  EXPECT_EQ(rule(0x20000 - 64), "");    // m's 64 bytes end where w_gate starts
  EXPECT_EQ(rule(0x30000 + 1024), "");  // right after w_up
  EXPECT_TRUE(has(rule(0x10000), "m overlaps x: a GEMM reads its inputs again and again while it writes m"));
  EXPECT_TRUE(has(rule(0x10000 + 510), "m overlaps x"));      // one byte in common
  EXPECT_TRUE(has(rule(0x20000 - 63), "m overlaps w_gate"));  // m's last byte on w_gate's first
  EXPECT_TRUE(has(rule(0x30000 + 1000), "m overlaps w_up"));
  EXPECT_TRUE(has(rule(0x10000 - 8), "m must share no byte with x, w_gate or w_up"));
  // Nothing to write, or nothing to read: nothing can overlap.
  EXPECT_EQ(ch04::geglu_gemm_overlap_rule(x, wg, wu, x, 0, 64, 8), "");
  EXPECT_EQ(ch04::geglu_gemm_overlap_rule(x, wg, wu, x, 4, 0, 8), "");
}

}  // namespace
