// GPU tests of the epilogue's cheaper arithmetic, on every input it can see: "fast" (5_fast.cu) may use the
// flush-to-zero GELU and the bf16x2 multiply only because they give the same bits as the exact forms that chapter 03's
// kernels and the other variants use (arithmetic_checks.cu runs them).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "04_epilogue_mlp/arithmetic_checks.h"
#include "cuda/check.h"
#include "cuda/tests/require_gpu.h"

namespace {

// Compute capability of the current GPU, major * 10 + minor.
int compute_capability() {
  int device = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

// All 2^32 pairs (a, b) of bf16 values: sm_90's mul.rn.bf16x2 gives bf16(float(a) * float(b)), the float32 multiply
// and rounding of the exact epilogue (the product of two bf16 values is exact in float32, so both round it once).
TEST(EpilogueArithmetic, Bf16x2MultiplyEqualsFloatMultiplyOnAllPairs) {
  SKIP_WITHOUT_GPU();
  if (compute_capability() != 90) GTEST_SKIP() << "the bf16x2 multiply of the fast variant runs on sm_90 only";
  const ch04::ExhaustiveCheck r = ch04::check_bf16x2_products();
  ASSERT_TRUE(r.ran) << "this build has no sm_90 code for the check (CMAKE_CUDA_ARCHITECTURES without 90?)";
  EXPECT_EQ(r.checked, int64_t(1) << 32);
  EXPECT_EQ(r.differ, 0) << "first pair: a = 0x" << std::hex << (r.first >> 16) << ", b = 0x" << (r.first & 0xFFFF);
}

// All 65536 bf16 inputs: the flush-to-zero GELU (gpu/gelu.cuh) rounds to the same bf16 as the exact one.
TEST(EpilogueArithmetic, FlushToZeroGeluEqualsExactGeluOnAllBf16Inputs) {
  SKIP_WITHOUT_GPU();
  const ch04::ExhaustiveCheck r = ch04::check_gelu_ftz();
  ASSERT_TRUE(r.ran);
  EXPECT_EQ(r.checked, 65536);
  EXPECT_EQ(r.differ, 0) << "first input: bf16 bits 0x" << std::hex << r.first;
}

}  // namespace
