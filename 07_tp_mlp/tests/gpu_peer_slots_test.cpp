// GPU test of --mode fused's reduction (peer_slots.h) on one GPU: the sum of the slots, as the kernel runs it between
// its barriers on every rank. The barriers and the peers' stores need two GPUs (the ctests np2_*fused*). Without a
// GPU every test skips.
//
// What is checked:
//  - bit for bit against the CPU: float32 sums in slot order, rounded once to bf16, for 1 to 4 slots, at sizes of one
//    vector, an odd count of vectors, and the blog's [8192, 768]; the output poisoned first (an unwritten element is
//    NaN and fails) and guarded (nothing written past it);
//  - for two slots, the sum is NCCL's bf16 sum of two parts, round(a + b), whichever order;
//  - a NaN or Inf in one slot reaches the output (the check cannot pass over a bad part);
//  - refusals: sizes that are not whole vectors, or an inbox that is not slots x the output.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "07_tp_mlp/peer_slots.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/tests/kernel_test_util.h"
#include "gpu/values.h"

namespace {

using ladder::DType;
using ladder::Tensor;
using namespace ladder::testing;

// The CPU's sum: slot 0 first, float32, one rounding.
std::vector<float> reference(const std::vector<float>& inbox, int slots, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float sum = 0;
    for (int s = 0; s < slots; ++s) sum += inbox[static_cast<size_t>(s * n + i)];
    out[static_cast<size_t>(i)] = ladder::round_to(DType::BF16, sum);
  }
  return out;
}

TEST(SumSlots, MatchesTheCpuBitForBit) {
  SKIP_WITHOUT_GPU();
  for (int slots = 1; slots <= 4; ++slots) {
    for (int64_t n : {int64_t{8}, int64_t{8 * 37}, int64_t{8192} * 768}) {
      SCOPED_TRACE(std::to_string(slots) + " slots of " + std::to_string(n));
      const std::vector<float> in = ladder::random_values(slots * n, 700 + slots, DType::BF16, -4.0f, 4.0f);
      const Tensor inbox = ladder::to_device(in, {slots * n}, DType::BF16);
      GuardedOutput out({n});
      out.poison();
      ch07::sum_slots(inbox, slots, out.view, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<float> got = ladder::to_host(out.view), want = reference(in, slots, n);
      int64_t differ = 0;
      for (int64_t i = 0; i < n; ++i) differ += !(got[static_cast<size_t>(i)] == want[static_cast<size_t>(i)]);
      EXPECT_EQ(differ, 0) << "first: got " << got[0] << ", want " << want[0];
      EXPECT_TRUE(out.guard_untouched()) << "wrote past the end of the output";
    }
  }
}

// Two ranks' parts: round(a + b) is the same in either order, so the sum is NCCL's, whatever rank went first.
TEST(SumSlots, TwoSlotsSumAsNcclSumsTwoParts) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 8 * 1001;
  const std::vector<float> in = ladder::random_values(2 * n, 711, DType::BF16, -100.0f, 100.0f);
  std::vector<float> swapped(in.begin() + n, in.end());
  swapped.insert(swapped.end(), in.begin(), in.begin() + n);
  const Tensor a = ladder::empty({n}, DType::BF16), b = ladder::empty({n}, DType::BF16);
  ch07::sum_slots(ladder::to_device(in, {2 * n}, DType::BF16), 2, a, nullptr);
  ch07::sum_slots(ladder::to_device(swapped, {2 * n}, DType::BF16), 2, b, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(bits_of(a.data, n), bits_of(b.data, n));
  const std::vector<float> got = ladder::to_host(a);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(got[static_cast<size_t>(i)],
              ladder::round_to(DType::BF16, in[static_cast<size_t>(i)] + in[static_cast<size_t>(n + i)]))
        << "element " << i;
}

TEST(SumSlots, ANanOrInfInOneSlotReachesTheOutput) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 8 * 5;
  std::vector<float> in = ladder::random_values(3 * n, 712, DType::BF16, -1.0f, 1.0f);
  in[static_cast<size_t>(2 * n + 7)] = std::numeric_limits<float>::quiet_NaN();  // slot 2, element 7
  in[static_cast<size_t>(n + 30)] = std::numeric_limits<float>::infinity();      // slot 1, element 30
  const Tensor out = ladder::empty({n}, DType::BF16);
  ch07::sum_slots(ladder::to_device(in, {3 * n}, DType::BF16), 3, out, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got = ladder::to_host(out);
  EXPECT_TRUE(std::isnan(got[7]));
  EXPECT_TRUE(std::isinf(got[30]));
  EXPECT_TRUE(std::isfinite(got[0]));
}

TEST(SumSlots, RefusesPartsThatDoNotFit) {
  SKIP_WITHOUT_GPU();
  const Tensor inbox = ladder::empty({2 * 12}, DType::BF16), out12 = ladder::empty({12}, DType::BF16);
  EXPECT_TRUE(throws_error([&] { ch07::sum_slots(inbox, 2, out12, nullptr); }, "(a multiple of 8)"));
  const Tensor in3 = ladder::empty({3 * 16}, DType::BF16), out16 = ladder::empty({16}, DType::BF16);
  EXPECT_TRUE(throws_error([&] { ch07::sum_slots(in3, 2, out16, nullptr); }, "2 slots of the output's 16 elements"));
  const Tensor f32 = ladder::empty({16}, DType::F32);
  EXPECT_TRUE(throws_error([&] { ch07::sum_slots(in3, 3, f32, nullptr); }, "expected contiguous bf16 tensors"));
}

}  // namespace
