// 16-byte loads and stores for the elementwise kernels, plain or with streaming cache hints.
//
// A tensor streamed once through a kernel is never read again, so caching it only pushes out lines something else
// could use. The .cs ("cache streaming") forms, __ldcs and __stcs, mark the lines evict-first. Whether that helps on
// a given GPU is a question for bench/elementwise.cu, which times both forms of each kernel.
#pragma once

#include <cuda_runtime.h>

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

}  // namespace ladder
