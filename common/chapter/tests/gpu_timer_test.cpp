// GpuTimer on a GPU: the flush is as big as it says and lies outside the events, the runs are counted and capped as
// documented, and a CUDA error inside a timing throws. Without a GPU every test skips.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "chapter/gpu_timer.h"
#include "chapter/l2_flush.h"
#include "cuda/check.h"
#include "gpu/info.h"
#include "gpu/memory.h"
#include "gpu/stream.h"
#include "cuda/tests/require_gpu.h"

namespace {

using namespace ladder;

Tensor zeroed(size_t bytes) {
  const Tensor t = empty({int64_t(bytes / 4)}, DType::F32);
  CUDA_CHECK(cudaMemset(t.data, 0, t.nbytes()));
  return t;
}

TEST(GpuTimer, FlushesTwiceTheL2) {
  SKIP_WITHOUT_GPU();
  const GpuTimer timer;
  int device = 0, l2 = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  EXPECT_EQ(timer.l2_bytes(), l2);
  EXPECT_EQ(timer.flush_bytes(), 2 * size_t(l2));
  EXPECT_NE(timer.flush_words().find("(2x the L2)"), std::string::npos) << timer.flush_words();
}

// The events hold fn() alone: timing nothing must read far less than the flush itself takes when timed as fn.
TEST(GpuTimer, TheFlushIsOutsideTheEvents) {
  SKIP_WITHOUT_GPU();
  const GpuTimer timer;
  const Tensor other = zeroed(timer.flush_bytes()), sink = empty({1}, DType::F32);
  const GpuTiming flush_like = timer.time([&] { read_through_l2(other, sink, current_stream()); }, 20, 0);
  const GpuTiming nothing = timer.time([] {}, 20, 0);
  EXPECT_LT(nothing.median_us() * 10, flush_like.median_us())
      << "nothing: " << nothing.median_us() << " us, a read as large as the flush: " << flush_like.median_us();
}

// The flush evicts what the run before left: reading half an L2's worth takes longer after it than back to back,
// when the data is still in the L2.
TEST(GpuTimer, TheFlushEvictsThePreviousRunsData) {
  SKIP_WITHOUT_GPU();
  const GpuTimer timer;
  const Tensor half = zeroed(size_t(timer.l2_bytes()) / 2), sink = empty({1}, DType::F32);
  const auto read = [&] { read_through_l2(half, sink, current_stream()); };
  const double flushed = timer.time(read, 20, 0).median_us();
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  read();
  CUDA_CHECK(cudaEventRecord(start, current_stream()));
  for (int i = 0; i < 20; ++i) read();
  CUDA_CHECK(cudaEventRecord(stop, current_stream()));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  const double hot = ms * 1e3 / 20;
  EXPECT_GT(flushed, 1.2 * hot) << "after the flush: " << flushed << " us; back to back, from the L2: " << hot << " us";
}

TEST(GpuTimer, RunsAreCountedAndCappedByTheBudget) {
  SKIP_WITHOUT_GPU();
  const GpuTimer timer;
  int calls = 0;
  const auto fn = [&] { ++calls; };
  const GpuTiming all = timer.time(fn, 40, 0);  // no cap
  EXPECT_EQ(all.runs(), 40);
  EXPECT_EQ(calls, GpuTimer::kWarmupRuns + 40);
  for (int i = 1; i < all.runs(); ++i) EXPECT_LE(all.us[i - 1], all.us[i]);
  EXPECT_LE(all.min_us(), all.median_us());
  EXPECT_EQ(timer.time(fn, 40, 1e-9).runs(), 3);  // a budget nothing fits in: the floor of 3
  EXPECT_EQ(timer.time(fn, 2, 1e-9).runs(), 2);   // ...or fewer, when fewer were asked for
  EXPECT_EQ(timer.time(fn, 40).runs(), 40);       // the default 2 s: room for 40 runs of nothing
}

TEST(GpuTimer, ACudaErrorInsideThrows) {
  SKIP_WITHOUT_GPU();
  const GpuTimer timer;
  EXPECT_THROW(timer.time([] { CUDA_CHECK(cudaErrorInvalidValue); }, 5), Error);
  EXPECT_NO_THROW(timer.time([] {}, 5));  // and the timer still works
}

}  // namespace
