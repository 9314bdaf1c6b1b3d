// What the gpu room decides on the host, checked without a GPU: the random inputs' values, which outputs may overlap
// inputs, what cuBLASLt is told about alignment, and what its "no kernel" error says.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "base/error.h"
#include "gpu/ops.h"
#include "gpu/tensor.h"
#include "gpu/values.h"

using namespace ladder;

namespace {
Tensor at(uintptr_t address, DType dt, Shape shape) {
  return view_of(reinterpret_cast<void*>(address), dt, std::move(shape));
}
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST(RandomValues, SeededUniformRoundedAndRecomputableOneByOne) {
  for (DType dt : {DType::F32, DType::BF16}) {
    const auto v = random_values(100001, 7, dt, -0.5f, 2.0f);
    EXPECT_EQ(v, random_values(100001, 7, dt, -0.5f, 2.0f));  // same seed, same values
    EXPECT_NE(v, random_values(100001, 8, dt, -0.5f, 2.0f));
    double sum = 0;
    int zeros = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
      ASSERT_EQ(v[i], random_value(7, i, dt, -0.5f, 2.0f)) << i;  // what the CPU reference recomputes
      ASSERT_EQ(v[i], round_to(dt, v[i]));                        // already a value of dtype
      ASSERT_GE(v[i], -0.5f);
      ASSERT_LE(v[i], 2.0f);  // bf16 rounding may reach hi itself
      sum += v[i];
      zeros += v[i] == 0.0f;
    }
    EXPECT_NEAR(sum / v.size(), 0.75, 0.01);  // uniform: the mean is the middle of [lo, hi)
    EXPECT_LT(zeros, 100);                    // never a tensor of zeros
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    EXPECT_LT(*lo, -0.49f);
    EXPECT_GT(*hi, 1.99f);
  }
}

TEST(Overlap, InPlaceAndDisjointPassPartialOverlapIsRefused) {
  const Tensor in = at(0x10000, DType::BF16, {64});
  EXPECT_NO_THROW(require_no_partial_overlap("gelu", "the input", in, in));                              // in place
  EXPECT_NO_THROW(require_no_partial_overlap("gelu", "the input", at(0x10080, DType::BF16, {64}), in));  // just after
  EXPECT_NO_THROW(require_no_partial_overlap("gelu", "the input", at(0x0ff80, DType::BF16, {64}), in));  // just before
  try {
    require_no_partial_overlap("gelu", "the input", at(0x10002, DType::BF16, {64}), in);  // one element on
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_TRUE(has(e.what(), "gelu: the output overlaps the input in part")) << e.what();
  }
  EXPECT_THROW(require_no_partial_overlap("mul", "b", at(0x10000, DType::BF16, {32}), in), Error);  // a prefix
}

TEST(Gemm, PointerAlignmentIsTheLargestPowerOfTwoUpTo256) {
  EXPECT_EQ(ops::pointer_alignment(reinterpret_cast<void*>(0x7f0000001000)), 256u);
  EXPECT_EQ(ops::pointer_alignment(reinterpret_cast<void*>(0x7f0000001002)), 2u);
  EXPECT_EQ(ops::pointer_alignment(reinterpret_cast<void*>(0x7f0000001004)), 4u);
  EXPECT_EQ(ops::pointer_alignment(reinterpret_cast<void*>(0x7f0000001010)), 16u);
  EXPECT_EQ(ops::pointer_alignment(reinterpret_cast<void*>(0x7f0000001080)), 128u);
}

TEST(Gemm, NoKernelMessageSaysWhatIsReallyWrong) {
  // float32 rows of 13 values: 52 bytes, not a 16-byte multiple. Nothing about bf16 may be said.
  std::string m = ops::no_kernel_message("mm", at(0x1000, DType::F32, {7, 13}), at(0x2000, DType::F32, {13, 8}),
                                         at(0x3000, DType::F32, {7, 8}));
  EXPECT_TRUE(has(m, "float32 a [7, 13] @ b [13, 8]")) << m;
  EXPECT_TRUE(has(m, "a's rows start every 52 bytes")) << m;
  EXPECT_TRUE(has(m, "multiple of 4 elements")) << m;
  EXPECT_FALSE(has(m, "bf16")) << m;
  EXPECT_FALSE(has(m, "b's rows")) << m;
  // bf16 with 16-byte rows, but a view that starts 2 bytes into its buffer.
  m = ops::no_kernel_message("addmm", at(0x1002, DType::BF16, {4, 16}), at(0x2000, DType::BF16, {16, 8}),
                             at(0x3000, DType::BF16, {4, 8}));
  EXPECT_TRUE(has(m, "a starts at an address aligned to only 2 bytes")) << m;
  EXPECT_FALSE(has(m, "rows start")) << m;
  // Nothing unusual: say so rather than guess.
  m = ops::no_kernel_message("mm", at(0x1000, DType::BF16, {4, 16}), at(0x2000, DType::BF16, {16, 8}),
                             at(0x3000, DType::BF16, {4, 8}));
  EXPECT_TRUE(has(m, "looks ordinary")) << m;
}
