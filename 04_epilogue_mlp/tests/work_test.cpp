// The formula 04_epilogue_mlp registers for its op, as ladder-trace and the chapter's report use it. A CPU test: it
// runs in the build without CUDA too, where ladder-trace still reads this chapter's traces.
#include <gtest/gtest.h>

#include "04_epilogue_mlp/work.h"
#include "trace/work.h"

using namespace ladder;

namespace {
Event op(std::vector<std::vector<int64_t>> dims, int n_types = 3) {
  Event e;
  e.cat = Cat::CpuOp;
  e.name = "ladder::geglu_gemm";
  e.set_inputs(std::move(dims), std::vector<std::string>(static_cast<size_t>(n_types), "c10::BFloat16"));
  return e;
}
}  // namespace

TEST(GegluGemmWork, TwoGemmsOneOutputAfterRegistering) {
  Work w;
  const Event blog = op({{64, 128, 768}, {3072, 768}, {3072, 768}});  // x [8192, 768] by two [3072, 768] weights
  EXPECT_FALSE(op_work(blog, &w));  // the trace library does not know our op
  ch04::register_geglu_gemm_work();
  ASSERT_TRUE(op_work(blog, &w));
  EXPECT_EQ(w.flops, 2.0 * 8192 * (2 * 3072) * 768);
  EXPECT_EQ(w.bytes, (8192.0 * 768 + 2 * 3072 * 768 + 8192 * 3072) * 2);  // g and u never leave the chip
}

// The op as torch.profiler records chapter 05's torch.ops.ladder.geglu_gemm: the keyword `variant` is a fourth input,
// a string, with no dims and no type (traces/reference/h100/05_ladder.json).
TEST(GegluGemmWork, TheTorchOpsVariantArgumentIsNoTensor) {
  Work w;
  ch04::register_geglu_gemm_work();
  Event torch_op = op({});
  torch_op.set_inputs({{64, 128, 768}, {3072, 768}, {3072, 768}, {}},
                      {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", ""});
  ASSERT_TRUE(op_work(torch_op, &w));
  EXPECT_EQ(w.flops, 2.0 * 8192 * (2 * 3072) * 768);
  EXPECT_FALSE(op_work(op({{64, 768}, {3072, 768}, {3072, 768}, {3}}, 4), &w));  // a fourth tensor: not our op's form
}

TEST(GegluGemmWork, ShapesThatDoNotFitAreUnknown) {
  Work w;
  ch04::register_geglu_gemm_work();
  EXPECT_FALSE(op_work(op({{64, 768}, {3072, 768}, {3072, 512}}), &w));  // up is not gate's shape
  EXPECT_FALSE(op_work(op({{64, 512}, {3072, 768}, {3072, 768}}), &w));  // x's width is not the weights'
  EXPECT_FALSE(op_work(op({{64, 768}, {3072, 768}}), &w));                // an input missing
  EXPECT_FALSE(op_work(op({{64, 768}, {3072, 768}, {3072, 768}}, 2), &w));  // a type missing
}
