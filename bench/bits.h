// Comparing two bf16 outputs bit for bit, for the benchmarks that check a kernel before they time it: the share of
// identical values and the largest gap in bf16 ulps (representable values between the two).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "cuda/check.h"
#include "gpu/tensor.h"

namespace benchmarks {

// The raw bits of a contiguous tensor, 16 at a time: one bf16 value each, or half of a float32.
inline std::vector<uint16_t> bits_of(const ladder::Tensor& t) {
  std::vector<uint16_t> bits(t.nbytes() / 2);
  CUDA_CHECK(cudaMemcpy(bits.data(), t.data, t.nbytes(), cudaMemcpyDeviceToHost));
  return bits;
}

// Position of a bf16 on the number line, so that the difference of two counts the representable values between.
inline int32_t ordered(uint16_t b) { return (b & 0x8000) ? -int32_t(b & 0x7FFF) : int32_t(b); }
inline bool is_nan(uint16_t b) { return (b & 0x7FFF) > 0x7F80; }

struct BitStats {
  double identical = 0;  // share of outputs with the same bits
  int64_t max_ulps = 0;  // largest gap in bf16 ulps (a NaN on one side only counts as "far")
};
inline BitStats compare_bits(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  int64_t same = 0, max_ulps = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i] || (is_nan(a[i]) && is_nan(b[i]))) {
      ++same;
      continue;
    }
    const int64_t d = (is_nan(a[i]) || is_nan(b[i])) ? INT32_MAX : std::abs(int64_t(ordered(a[i])) - ordered(b[i]));
    max_ulps = std::max(max_ulps, d);
  }
  return {a.empty() ? 1.0 : double(same) / double(a.size()), max_ulps};
}

}  // namespace benchmarks
