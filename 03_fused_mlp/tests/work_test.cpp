// The formula 03_fused_mlp registers for its op, as ladder-trace and the chapter's report use it. A CPU test: it runs
// in the build without CUDA too, where ladder-trace still reads this chapter's traces.
#include <gtest/gtest.h>

#include "03_fused_mlp/work.h"
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
}  // namespace

TEST(GeluMulWork, BytesOfTheBlogShapeAfterRegistering) {
  Work w;
  const Event gelu_mul = op("ladder::gelu_mul", {{8192, 3072}, {8192, 3072}}, {"c10::BFloat16", "c10::BFloat16"});
  EXPECT_FALSE(op_work(gelu_mul, &w));  // the trace library does not know our op
  ch03::register_gelu_mul_work();
  ch03::register_gelu_mul_work();  // twice is harmless
  ASSERT_TRUE(op_work(gelu_mul, &w));
  EXPECT_EQ(w.bytes, 3 * 8192.0 * 3072 * 2);  // g and u read, the product written, 2 bytes each
  EXPECT_EQ(w.flops, 0);
  EXPECT_FALSE(op_work(op("gelu_mul", {{8}, {8}}, {"float", "float"}), &w));  // only under its own name
}
