// 01_matmul_add's hand-written kernel: the broadcast bias add y[i, j] = a[i, j] + b[j].
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "gpu/tensor.h"
#include "gpu/variants.h"

namespace ch01 {

// A launcher gets raw pointers: a and y are rows x cols (contiguous), b has cols elements. It accepts any rows, cols
// >= 0 (nothing to do launches nothing), checks its launch (CUDA_CHECK_LAUNCH) and does not synchronize. y may be a
// itself (in place: defined, the kernels mark no pointer __restrict__) but must not overlap a or b in part (threads
// would read what other threads write); the op below refuses that.
using AddLaunch = void (*)(const void* a, const void* b, void* y, int64_t rows, int64_t cols, ladder::DType dtype,
                           cudaStream_t stream);
// The variants of the add kernel; add yours here (see README.md, exercise 2).
const std::vector<ladder::Variant<AddLaunch>>& add_variants();

// The op: out = a + bias (broadcast over rows), recorded as an "add" op with its inputs. Throws ladder::Error when out
// overlaps a or bias in part.
void add(const ladder::Tensor& a, const ladder::Tensor& bias, const ladder::Tensor& out, const char* variant = "plain");

}  // namespace ch01
