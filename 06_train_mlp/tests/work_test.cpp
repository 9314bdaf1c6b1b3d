// The formulas chapter 06 registers for its backward ops, as ladder-trace and the chapter's report use them. A CPU
// test: it runs in the build without CUDA too.
#include "06_train_mlp/work.h"

#include <gtest/gtest.h>

#include "trace/work.h"

using namespace ladder;

namespace {
Event op(const std::string& name, std::vector<std::vector<int64_t>> dims, std::vector<std::string> types) {
  Event e;
  e.cat = Cat::CpuOp;
  e.name = name;
  e.set_inputs(std::move(dims), std::move(types));
  return e;
}
const std::string kBf16 = "c10::BFloat16";
}  // namespace

TEST(BackwardWork, BytesOfTheBlogShapeAfterRegistering) {
  Work w;
  const Event fused =
      op("ladder::gelu_mul_backward", {{8192, 3072}, {8192, 3072}, {8192, 3072}}, {kBf16, kBf16, kBf16});
  const Event gelu_backward = op("aten::gelu_backward", {{8192, 3072}, {8192, 3072}, {}}, {kBf16, kBf16, ""});
  const Event add = op("aten::add_", {{8192, 768}, {8192, 768}}, {kBf16, kBf16});
  EXPECT_FALSE(op_work(fused, &w));  // the trace library does not know our op
  ch06::register_backward_work();
  ch06::register_backward_work();  // twice is harmless
  ASSERT_TRUE(op_work(fused, &w));
  EXPECT_EQ(w.bytes, 5 * 8192.0 * 3072 * 2);  // dh, g, u read; dg, du written; 2 bytes each
  EXPECT_EQ(w.flops, 0);
  ASSERT_TRUE(op_work(gelu_backward, &w));
  EXPECT_EQ(w.bytes, 3 * 8192.0 * 3072 * 2);  // the gradient and g read, one tensor written
  ASSERT_TRUE(op_work(add, &w));
  EXPECT_EQ(w.bytes, 3 * 8192.0 * 768 * 2);
}

TEST(BackwardWork, RefusesShapesThatDoNotFit) {
  ch06::register_backward_work();
  Work w;
  EXPECT_FALSE(op_work(op("ladder::gelu_mul_backward", {{8, 3}, {8, 3}}, {kBf16, kBf16}), &w));  // two inputs
  EXPECT_FALSE(op_work(op("ladder::gelu_mul_backward", {{8, 3}, {8, 3}, {8, 4}}, {kBf16, kBf16, kBf16}), &w));
  EXPECT_FALSE(op_work(op("ladder::gelu_mul_backward", {{8, 3}, {8, 3}, {8, 3}}, {kBf16, "float", kBf16}), &w));
}
