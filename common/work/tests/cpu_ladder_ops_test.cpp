// The formulas of the ladder's own ops (work/ladder_ops.h), as ladder-trace and the chapters' reports use them. CPU
// tests: they run in the build without CUDA too, where ladder-trace still reads the chapters' traces. The first test of
// each op checks the registry before registering, so each runs alone (gtest_discover_tests: one process a test).
#include <gtest/gtest.h>

#include "trace/analyses/work.h"
#include "work/ladder_ops.h"

using namespace ladder;

namespace {
Event op(const std::string& name, std::vector<std::vector<int64_t>> dims, std::vector<std::string> types) {
  Event e;
  e.cat = Cat::CpuOp;
  e.name = name;
  e.set_inputs(std::move(dims), std::move(types));
  return e;
}
Event geglu(std::vector<std::vector<int64_t>> dims, int n_types = 3) {
  return op("ladder::geglu_gemm", std::move(dims), std::vector<std::string>(static_cast<size_t>(n_types), "c10::BFloat16"));
}
const std::string kBf16 = "c10::BFloat16";
}  // namespace

TEST(GeluMulWork, BytesOfTheBlogShapeAfterRegistering) {
  Work w;
  const Event gelu_mul = op("ladder::gelu_mul", {{8192, 3072}, {8192, 3072}}, {"c10::BFloat16", "c10::BFloat16"});
  EXPECT_FALSE(op_work(gelu_mul, &w));  // the trace library alone does not know our op
  register_ladder_ops_work();
  register_ladder_ops_work();  // twice is harmless
  ASSERT_TRUE(op_work(gelu_mul, &w));
  EXPECT_EQ(w.bytes, 3 * 8192.0 * 3072 * 2);  // g and u read, the product written, 2 bytes each
  EXPECT_EQ(w.flops, 0);
  EXPECT_FALSE(op_work(op("gelu_mul", {{8}, {8}}, {"float", "float"}), &w));  // only under its own name
}

TEST(GegluGemmWork, TwoGemmsOneOutputAfterRegistering) {
  Work w;
  const Event blog = geglu({{64, 128, 768}, {3072, 768}, {3072, 768}});  // x [8192, 768] by two [3072, 768] weights
  EXPECT_FALSE(op_work(blog, &w));  // the trace library alone does not know our op
  register_ladder_ops_work();
  ASSERT_TRUE(op_work(blog, &w));
  EXPECT_EQ(w.flops, 2.0 * 8192 * (2 * 3072) * 768);
  EXPECT_EQ(w.bytes, (8192.0 * 768 + 2 * 3072 * 768 + 8192 * 3072) * 2);  // g and u never leave the chip
}

// The op as torch.profiler records chapter 05's torch.ops.ladder.geglu_gemm: the keyword `variant` is a fourth input,
// a string, with no dims and no type (traces/reference/h100/05_ladder.json).
TEST(GegluGemmWork, TheTorchOpsVariantArgumentIsNoTensor) {
  Work w;
  register_ladder_ops_work();
  Event torch_op = geglu({});
  torch_op.set_inputs({{64, 128, 768}, {3072, 768}, {3072, 768}, {}},
                      {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", ""});
  ASSERT_TRUE(op_work(torch_op, &w));
  EXPECT_EQ(w.flops, 2.0 * 8192 * (2 * 3072) * 768);
  EXPECT_FALSE(op_work(geglu({{64, 768}, {3072, 768}, {3072, 768}, {3}}, 4), &w));  // a fourth tensor: not our op's form
}

TEST(GegluGemmWork, ShapesThatDoNotFitAreUnknown) {
  Work w;
  register_ladder_ops_work();
  EXPECT_FALSE(op_work(geglu({{64, 768}, {3072, 768}, {3072, 512}}), &w));  // up is not gate's shape
  EXPECT_FALSE(op_work(geglu({{64, 512}, {3072, 768}, {3072, 768}}), &w));  // x's width is not the weights'
  EXPECT_FALSE(op_work(geglu({{64, 768}, {3072, 768}}), &w));                // an input missing
  EXPECT_FALSE(op_work(geglu({{64, 768}, {3072, 768}, {3072, 768}}, 2), &w));  // a type missing
}

TEST(BackwardWork, BytesOfTheBlogShapeAfterRegistering) {
  Work w;
  const Event fused =
      op("ladder::gelu_mul_backward", {{8192, 3072}, {8192, 3072}, {8192, 3072}}, {kBf16, kBf16, kBf16});
  const Event gelu_backward = op("aten::gelu_backward", {{8192, 3072}, {8192, 3072}, {}}, {kBf16, kBf16, ""});
  const Event add = op("aten::add_", {{8192, 768}, {8192, 768}}, {kBf16, kBf16});
  EXPECT_FALSE(op_work(fused, &w));  // the trace library alone does not know our op (aten's two it knows)
  register_ladder_ops_work();
  ASSERT_TRUE(op_work(fused, &w));
  EXPECT_EQ(w.bytes, 5 * 8192.0 * 3072 * 2);  // dh, g, u read; dg, du written; 2 bytes each
  EXPECT_EQ(w.flops, 0);
  ASSERT_TRUE(op_work(gelu_backward, &w));
  EXPECT_EQ(w.bytes, 3 * 8192.0 * 3072 * 2);  // the gradient and g read, one tensor written
  ASSERT_TRUE(op_work(add, &w));
  EXPECT_EQ(w.bytes, 3 * 8192.0 * 768 * 2);
}

TEST(BackwardWork, RefusesShapesThatDoNotFit) {
  register_ladder_ops_work();
  Work w;
  EXPECT_FALSE(op_work(op("ladder::gelu_mul_backward", {{8, 3}, {8, 3}}, {kBf16, kBf16}), &w));  // two inputs
  EXPECT_FALSE(op_work(op("ladder::gelu_mul_backward", {{8, 3}, {8, 3}, {8, 4}}, {kBf16, kBf16, kBf16}), &w));
  EXPECT_FALSE(op_work(op("ladder::gelu_mul_backward", {{8, 3}, {8, 3}, {8, 3}}, {kBf16, "float", kBf16}), &w));
}
