// Views and the transpose-flag choice: the metadata lessons of 02_linear, checked without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "gpu/ops.h"
#include "gpu/tensor.h"

using namespace ladder;

namespace {
Tensor fake(Shape shape, DType dt = DType::BF16) {
  static char storage[16];
  return view_of(storage, dt, std::move(shape));
}
}  // namespace

TEST(Tensor, TransposeSwapsShapeAndStridesAndKeepsData) {
  const Tensor w = fake({64, 32});
  const Tensor wt = w.t();
  EXPECT_EQ(wt.shape, (Shape{32, 64}));
  EXPECT_EQ(wt.strides, (Shape{1, 32}));
  EXPECT_EQ(wt.data, w.data);
  EXPECT_FALSE(wt.is_contiguous());
  EXPECT_EQ(wt.t().strides, w.strides);
  EXPECT_THROW(fake({2, 3, 4}).t(), Error);
}

TEST(Tensor, ReshapeIsAViewOfContiguousData) {
  const Tensor x = fake({64, 128, 768});
  const Tensor x2 = x.reshape({-1, 768});
  EXPECT_EQ(x2.shape, (Shape{8192, 768}));
  EXPECT_EQ(x2.strides, (Shape{768, 1}));
  EXPECT_EQ(x2.data, x.data);
  EXPECT_THROW(x.reshape({-1, 7}), Error);       // 6291456 is not a multiple of 7
  EXPECT_THROW(x.reshape({-1, -1}), Error);      // two unknowns
  EXPECT_THROW(fake({4, 8}).t().reshape({32}), Error);  // a transposed view is not contiguous
}

TEST(Tensor, ContiguityIgnoresSizeOneDims) {
  Tensor row = fake({1, 8});
  row.strides = {12345, 1};
  EXPECT_TRUE(row.is_contiguous());
  EXPECT_EQ(row.numel(), 8);
  EXPECT_EQ(row.nbytes(), 16u);
}

TEST(Tensor, Bf16RoundingIsNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  // 1 + 2^-8 lies exactly between two bf16 values: ties go to the even one (1.0).
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  // 1 + 3 * 2^-8 lies between 1 + 2^-7 and 1 + 2^-6... rounds up to the even mantissa.
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(NAN))));
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(-2.5f)), -2.5f);
  EXPECT_EQ(round_to(DType::F32, 0.1f), 0.1f);
}

TEST(GemmFlags, RowMajorIsNAndTransposedViewIsT) {
  const Tensor x = fake({1024, 32}), W = fake({64, 32});
  const ops::GemmOperand wx = ops::gemm_operand(x);
  EXPECT_FALSE(wx.transposed);
  EXPECT_EQ(wx.ld, 32);
  const ops::GemmOperand wt = ops::gemm_operand(W.t());
  EXPECT_TRUE(wt.transposed);
  EXPECT_EQ(wt.ld, 32);
  // linear: x @ W.t() reaches cuBLAS as "TN", the letters in the kernel's name.
  EXPECT_EQ(ops::gemm_flags(x, W.t()), "TN");
  // matmul of two row-major tensors: "NN".
  EXPECT_EQ(ops::gemm_flags(fake({64, 64}), fake({64, 64})), "NN");
  EXPECT_EQ(ops::gemm_flags(fake({64, 32}).t(), fake({64, 16})), "NT");
}

TEST(GemmFlags, SizeOneDimsDoNotConfuseTheChoice) {
  // W of shape [N, 1] (in_dim 1): W.t() is [1, N] with strides [1, 1]; it is one contiguous row.
  const Tensor W = fake({64, 1});
  const ops::GemmOperand op = ops::gemm_operand(W.t());
  EXPECT_FALSE(op.transposed);
  EXPECT_EQ(op.ld, 64);
  // A single row of x: [1, K].
  EXPECT_EQ(ops::gemm_operand(fake({1, 32})).ld, 32);
}

TEST(GemmFlags, NoUnitStrideIsRefused) {
  Tensor odd = fake({4, 4});
  odd.strides = {8, 2};  // every other column: cuBLAS cannot read this without a copy
  EXPECT_THROW(ops::gemm_operand(odd), Error);
}

TEST(DType, ParseNamesAndRefuseOthers) {
  EXPECT_EQ(parse_dtype("bf16"), DType::BF16);
  EXPECT_EQ(parse_dtype("float32"), DType::F32);
  EXPECT_THROW(parse_dtype("fp8"), UsageError);
}
