// The values of tensors on the GPU: seeded random inputs (made on the GPU, recomputable on the CPU one element at a
// time), and the looks at an output a check needs without copying all of it to the host.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/tensor.h"

namespace ladder {

// Seeded uniform values in [lo, hi), already rounded to `dtype`, so the CPU reference sees exactly what the GPU sees.
// Element i depends only on (seed, i) (gpu/random.h), so the three below agree: random_tensor makes a whole tensor on
// the GPU in one kernel (no host copy, whatever its size), and the CPU recomputes just the elements it checks.
float random_value(uint64_t seed, int64_t i, DType dtype, float lo = -1.0f, float hi = 1.0f);
std::vector<float> random_values(int64_t n, uint64_t seed, DType dtype, float lo = -1.0f, float hi = 1.0f);
Tensor random_tensor(const Shape& shape, uint64_t seed, DType dtype, float lo = -1.0f, float hi = 1.0f);

// FNV-1a over a tensor's bytes: two runs that print the same checksum produced bit-identical outputs.
uint64_t checksum(const Tensor& t);

// How many elements of a contiguous tensor are NaN or Inf, and the index of the first; counted on the GPU, so a check
// covers every element of an output too large to copy to the host.
struct NonFinite {
  int64_t count = 0;
  int64_t first = -1;
};
NonFinite count_nonfinite(const Tensor& t);
// The values of a contiguous tensor at the given flat indices, gathered on the GPU.
std::vector<float> values_at(const Tensor& t, const std::vector<int64_t>& flat);

}  // namespace ladder
