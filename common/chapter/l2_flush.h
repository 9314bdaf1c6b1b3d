// The L2 flush behind GpuTimer: one kernel reads a buffer of twice the L2's size through it. Reading, not writing, is
// the point: a memset leaves the L2 full of dirty lines, and the timed run after it pays for writing them back. On an
// H200 a 100.7 MB copy took 29.06 us (3464 GB/s) after a memset of twice the L2 and 25.52 us (3944 GB/s) after this
// read; a 1 GiB copy, too long for the flush to matter, ran at 4255 GB/s (bench/results/2026-11-29_h200_l2_flush).
#pragma once

#include <cuda_runtime_api.h>

#include "gpu/tensor.h"

namespace ladder {

// Reads every byte of `buffer` (its size a multiple of 16 bytes) on `stream`; writes nothing but, never in practice,
// one word of `sink` (a 4-byte tensor), which keeps the compiler from dropping the loads.
void read_through_l2(const Tensor& buffer, const Tensor& sink, cudaStream_t stream);

}  // namespace ladder
