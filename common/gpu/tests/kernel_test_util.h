// What the GPU tests of the elementwise kernels share: skipping without a GPU (cuda/tests/require_gpu.h), the sizes
// every variant is tried on, an output buffer with poisoned guard elements after it, to catch a kernel that writes
// past the end, and throws_error, which holds a refusal to its message. Everything here is inline (or a type, or
// constexpr): a chapter's tests are several gpu_*.cpp files linked into one binary, and each includes this header
// (03_simple_mlp/tests has two).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuda/check.h"
#include "cuda/tests/require_gpu.h"  // SKIP_WITHOUT_GPU
#include "gpu/memory.h"
#include "gpu/tensor.h"

namespace ladder::testing {

using bf16 = __nv_bfloat16;

inline const std::vector<Shape> kShapes = {{1}, {7}, {8}, {9}, {1000003}, {8192, 3072}};
constexpr int64_t kGuard = 16;            // poisoned elements after each output: a kernel must leave them alone
constexpr uint16_t kPoisonBits = 0xFFFF;  // what ladder::poison leaves in a bf16 (a NaN)

// EXPECT_TRUE(throws_error([&] { ... }, "words")): passes when the call throws a ladder::Error whose message holds
// `words`, so that a refusal test cannot pass on another refusal than the one it means.
inline ::testing::AssertionResult throws_error(const std::function<void()>& f, const std::string& words) {
  try {
    f();
  } catch (const Error& e) {
    if (std::string(e.what()).find(words) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "threw \"" << e.what() << "\", not \"" << words << "\"";
  }
  return ::testing::AssertionFailure() << "threw nothing; expected \"" << words << "\"";
}

inline int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

inline std::vector<uint16_t> bits_of(const void* data, int64_t n) {
  std::vector<uint16_t> bits(static_cast<size_t>(n));
  if (n > 0) CUDA_CHECK(cudaMemcpy(bits.data(), data, n * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  return bits;
}

// An output of `shape` at the start of a poisoned buffer with kGuard more elements.
struct GuardedOutput {
  Tensor buffer, view;
  explicit GuardedOutput(const Shape& shape) {
    const int64_t n = numel_of(shape);
    buffer = ladder::empty({n + kGuard}, DType::BF16);
    view = ladder::view_of(buffer.data, DType::BF16, shape);
  }
  void poison() const { ladder::poison(buffer); }
  // True when the kGuard elements after the output still hold the poison.
  bool guard_untouched() const {
    for (uint16_t b : bits_of(static_cast<const bf16*>(buffer.data) + view.numel(), kGuard))
      if (b != kPoisonBits) return false;
    return true;
  }
};

}  // namespace ladder::testing
