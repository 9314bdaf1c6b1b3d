// The mma.sync ceiling of the GPU the benchmark runs on: how many TFLOP/s its tensor cores reach through mma.sync
// (m16n8k16, bf16 in, float32 accumulate) when nothing else runs, no memory, no shared memory, no epilogue. The
// portable geglu_gemm variant is built on that instruction, so its TFLOP/s as a share of this is how close it comes
// to what the instruction allows on this GPU (wgmma, Hopper's, can go further).
#pragma once

#include <vector>

namespace benchmarks {

// Runs the register-resident mma.sync loop on every SM, kernel launches queued on the current stream, and returns
// the median TFLOP/s over `runs` timed runs (ladder::GpuTimer). Needs compute capability 8.0 or later.
double mma_sync_ceiling_tflops(int sms, int runs);

// The same loop over occupancy and independence: TFLOP/s with 4, 8, 16 and 32 warps on every SM (blocks of 4 warps)
// and 1, 2, 4 and 8 independent accumulators ("chains") a warp. How many of each the instruction needs on this GPU to
// reach its ceiling: the portable variant runs 8 warps an SM, each with 32 independent mma.sync per k-step.
struct MmaPoint {
  int warps_per_sm, chains;
  double tflops;
};
std::vector<MmaPoint> mma_sync_curve(int sms, int runs);

}  // namespace benchmarks
