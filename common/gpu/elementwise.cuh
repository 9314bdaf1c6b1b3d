// What the ladder's vectorized elementwise kernels share: 16-byte loads and stores (plain, or with streaming cache
// hints), and the launch arithmetic (block size, grids, alignment).
//
// A tensor streamed once through a kernel is never read again, so caching it only pushes out lines something else
// could use. The .cs ("cache streaming") forms, __ldcs and __stcs, mark the lines evict-first. Whether that helps on
// a given GPU is a question for bench/elementwise.cpp, which times both forms of each kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/check.h"

namespace ladder {

template <bool kStream>
__device__ __forceinline__ uint4 load16(const uint4* p) {
  if constexpr (kStream)
    return __ldcs(p);
  else
    return *p;
}

template <bool kStream>
__device__ __forceinline__ void store16(uint4* p, const uint4& v) {
  if constexpr (kStream)
    __stcs(p, v);
  else
    *p = v;
}

constexpr int kBlock = 256;   // threads per block
constexpr int kVecElems = 8;  // bf16 values in one 16-byte vector (uint4)

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

inline unsigned blocks_for(int64_t threads_needed) {
  return static_cast<unsigned>((threads_needed + kBlock - 1) / kBlock);
}

// Grid of a vec kernel: one pass over the vectors (at least one block, for the tail), or, with `cap` > 0, at most
// `cap` blocks looping over the rest.
inline unsigned vec_grid(int64_t n, int vecs_per_thread, int cap) {
  const int64_t tile_elems = static_cast<int64_t>(kBlock) * vecs_per_thread * kVecElems;
  int64_t blocks = (n / kVecElems * kVecElems + tile_elems - 1) / tile_elems;
  if (blocks < 1) blocks = 1;
  if (cap > 0 && blocks > cap) blocks = cap;
  return static_cast<unsigned>(blocks);
}

// How many blocks of `kKernel` the whole GPU holds at once: SMs x blocks per SM (limited by registers). Asked once
// per kernel (one static per template instance) and remembered, so a forward makes no extra runtime calls; it assumes
// one GPU per process.
template <auto kKernel>
int resident_blocks() {
  static const int blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, kBlock, 0));
    return sms * per_sm;
  }();
  return blocks;
}

}  // namespace ladder
