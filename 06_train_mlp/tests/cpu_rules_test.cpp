// CPU tests of chapter 06's rules: which modes run on which GPU and shape, in the words the chapter prints, and the
// check the ops make that an output overlaps no other tensor (views_disjoint), on views that point at nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/kernels.cuh"
#include "06_train_mlp/mlp.h"

namespace {

using ladder::DType;
using ladder::Tensor;

bool has(const std::string& text, const std::string& words) { return text.find(words) != std::string::npos; }

// A bf16 [rows, cols] view at byte address `at` with row stride ld (elements).
Tensor view(uintptr_t at, int64_t rows, int64_t cols, int64_t ld) {
  Tensor t = ladder::view_of(reinterpret_cast<void*>(at), DType::BF16, {rows, cols});
  t.strides = {ld, 1};
  return t;
}

TEST(TrainRules, EpilogueSizeRuleComesBeforeTheGpu) {
  // Before the GPU is known, only the sizes, in every build: the same words with or without sm_90a code.
  const std::string why = ch06::mode_cannot_run(ch06::Mode::Epilogue, 24, 13);
  EXPECT_TRUE(has(why, "--mode epilogue: dim = 24 and hidden = 13 must be multiples of 8")) << why;
  EXPECT_EQ(ch06::mode_cannot_run(ch06::Mode::Epilogue, 24, 80), "");
  EXPECT_EQ(ch06::dgated_gemm_shape_rule(768, 3072), "");
  // On a GPU that is not a Hopper: the line the chapter's Hopper-only ctests take for a skip.
  const std::string a100 = ch06::mode_cannot_run(ch06::Mode::Epilogue, 24, 80, 8, 0);
  EXPECT_TRUE(has(a100, LADDER_HAVE_SM90A ? "--mode epilogue: its kernel (wgmma, TMA) needs a Hopper GPU"
                                          : "--mode epilogue: this build has no sm_90a code"))
      << a100;
  EXPECT_EQ(ch06::mode_cannot_run(ch06::Mode::Epilogue, 24, 80, 9, 0) == "", bool(LADDER_HAVE_SM90A));
  EXPECT_EQ(ch06::mode_cannot_run(ch06::Mode::Fused, 24, 13, 8, 0), "");
}

TEST(TrainRules, ViewsDisjoint) {
  // [dg | du] of 4 rows x 256 columns: the halves share no element, whichever comes first.
  const uintptr_t base = 0x100000;
  const Tensor dg = view(base, 4, 256, 512), du = view(base + 512, 4, 256, 512);
  EXPECT_TRUE(ch06::views_disjoint(dg, du));
  EXPECT_TRUE(ch06::views_disjoint(du, dg));
  EXPECT_FALSE(ch06::views_disjoint(dg, dg));                             // the same view twice
  EXPECT_FALSE(ch06::views_disjoint(dg, view(base + 2, 4, 256, 512)));    // one column over
  EXPECT_FALSE(ch06::views_disjoint(du, view(base + 2, 4, 256, 512)));    // its last column on du's first
  EXPECT_FALSE(ch06::views_disjoint(dg, view(base + 510, 4, 256, 256)));  // another row stride, spans in common
  // Contiguous tensors: apart only when their bytes are.
  const Tensor h = view(base, 4, 256, 256);
  EXPECT_TRUE(ch06::views_disjoint(h, view(base + 4 * 512, 4, 256, 256)));  // right after h
  EXPECT_FALSE(ch06::views_disjoint(h, view(base + 4 * 512 - 2, 4, 256, 256)));
  EXPECT_FALSE(ch06::views_disjoint(h, ladder::view_of(reinterpret_cast<void*>(base + 100), DType::BF16, {2, 8, 64})));
  EXPECT_TRUE(ch06::views_disjoint(h, view(base, 0, 256, 256)));  // nothing to share
}

}  // namespace
