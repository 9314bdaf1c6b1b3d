// The kernel behind mma_ceiling.h: every warp runs kChains independent chains of mma.sync.m16n8k16 (bf16, float32
// accumulate) on operands that stay in registers, so the tensor cores are the only limit. Independent chains: one
// mma's result is not the next one's input until kChains later, so the pipe never waits on a dependency. The ceiling:
// 8 warps per block, 2 blocks per SM: 16 warps per SM, 4 per SM sub-partition, each with 8 chains in flight. The
// curve: 1 to 8 blocks of 4 warps on every SM, 1 to 8 chains a warp.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "bench/mma_ceiling.h"
#include "chapter/gpu_timer.h"
#include "cuda/check.h"

namespace benchmarks {
namespace {

constexpr int kChains = 8, kThreads = 256, kBlocksPerSm = 2, kIters = 4096;
constexpr double kFlopsPerMma = 2.0 * 16 * 8 * 16;  // m16n8k16: 16 x 8 outputs, 16 multiply-adds each

template <int kChains>
__global__ void __launch_bounds__(256) mma_loop(float* sink, int iters) {
#if __CUDA_ARCH__ >= 800
  // Operands: any bits will do (bf16 values from the lane id); they never change, so they stay in registers.
  const uint32_t v = 0x3F803F80u ^ (threadIdx.x & 7);  // a pair of bf16 near 1.0
  const uint32_t a0 = v, a1 = v ^ 1, a2 = v ^ 2, a3 = v ^ 3, b0 = v ^ 4, b1 = v ^ 5;
  float acc[kChains][4] = {};
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
          "{%0, %1, %2, %3};"
          : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (sum == 1234.5f) *sink = sum;  // never true in practice; keeps the loop from being thrown away
#else
  (void)sink, (void)iters;
#endif
}

// The loop with kC chains a warp, `warps` warps an SM (blocks of `threads`), timed: TFLOP/s over all SMs.
template <int kC>
double run_loop(int sms, int warps, int threads, int runs) {
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&sink, sizeof(float)));
  const int blocks = sms * (warps * 32 / threads);
  const ladder::GpuTimer timer;
  const ladder::GpuTiming t = timer.time(
      [&] {
        mma_loop<kC><<<blocks, threads>>>(sink, kIters);
        CUDA_CHECK_LAUNCH();
      },
      runs, 0);
  CUDA_CHECK(cudaFree(sink));
  const double flops = double(blocks) * (threads / 32) * double(kIters) * kC * kFlopsPerMma;
  return flops / (t.median_us() * 1e6);
}

}  // namespace

double mma_sync_ceiling_tflops(int sms, int runs) {
  return run_loop<kChains>(sms, kBlocksPerSm * kThreads / 32, kThreads, runs);
}

std::vector<MmaPoint> mma_sync_curve(int sms, int runs) {
  std::vector<MmaPoint> points;
  for (int warps : {4, 8, 16, 32})  // blocks of 4 warps: 1, 2, 4 or 8 of them on every SM
    for (int chains : {1, 2, 4, 8}) {
      const double tflops = chains == 1   ? run_loop<1>(sms, warps, 128, runs)
                            : chains == 2 ? run_loop<2>(sms, warps, 128, runs)
                            : chains == 4 ? run_loop<4>(sms, warps, 128, runs)
                                          : run_loop<8>(sms, warps, 128, runs);
      points.push_back({warps, chains, tflops});
    }
  return points;
}

}  // namespace benchmarks
