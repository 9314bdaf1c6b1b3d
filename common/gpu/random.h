// The ladder's random inputs: value i of a tensor is a hash of (seed, i), not the i-th draw of a generator. So the
// GPU fills a tensor of any size in one kernel (every thread computes its own elements), and the CPU reference
// recomputes exactly the elements it checks, without making the whole tensor on the host. The same code runs on both
// sides (__host__ __device__), and the arithmetic is one fused multiply-add, correctly rounded on both, so the two
// agree bit for bit.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define LADDER_HOST_DEVICE __host__ __device__
#else
#define LADDER_HOST_DEVICE
#endif

namespace ladder {

// splitmix64's output function: a bijection of 64-bit words whose every output bit depends on every input bit.
LADDER_HOST_DEVICE inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Element i of the stream `seed`: uniform in [lo, hi), from 24 random bits (exactly a float in [0, 1)). The stream is
// splitmix64's own sequence started from a mixed seed, so seeds 1, 2, 3 give unrelated tensors.
LADDER_HOST_DEVICE inline float uniform_at(uint64_t seed, uint64_t i, float lo, float hi) {
  const uint64_t h = mix64(mix64(seed) + (i + 1) * 0x9e3779b97f4a7c15ull);
  const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
  return fmaf(hi - lo, u, lo);
}

}  // namespace ladder
