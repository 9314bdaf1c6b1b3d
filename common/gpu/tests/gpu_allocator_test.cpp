// The caching allocator (gpu/allocator.h) on a GPU: a freed block waits in the pool and comes back for the next
// request of its size without a cudaMalloc, the totals say what is handed out and what is held, poisoned blocks are
// NaN (poisoned on the block's stream), tensors give their blocks back when their last view goes, a double free or a
// foreign pointer is refused, a block another stream uses waits for it, and a failed cudaFree is reported where it
// happens. Without a GPU every test skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "cuda/check.h"
#include "cuda/tests/require_gpu.h"
#include "gpu/allocator.h"
#include "gpu/memory.h"
#include "gpu/stream.h"
#include "gpu/tests/kernel_test_util.h"  // throws_error

namespace {

using ladder::device_allocate;
using ladder::device_free;
using ladder::memory_totals;
using ladder::testing::throws_error;

// Holds a stream at a host function until release() (at most 10 s, so a failing test cannot hang): work queued on it
// afterwards waits, as behind a long kernel, and an event recorded on it stays incomplete.
class StreamGate {
 public:
  explicit StreamGate(cudaStream_t s) : stream_(s) { CUDA_CHECK(cudaLaunchHostFunc(s, &StreamGate::hold, this)); }
  ~StreamGate() {
    release();
    cudaStreamSynchronize(stream_);  // the host function must be done with `this`
  }
  void release() { open_ = true; }

 private:
  static void CUDART_CB hold(void* self) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!static_cast<StreamGate*>(self)->open_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  cudaStream_t stream_;
  std::atomic<bool> open_{false};
};

// A non-blocking stream (no implicit ordering with the legacy default stream), destroyed at the end of the scope.
struct SideStream {
  cudaStream_t s = nullptr;
  SideStream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~SideStream() { cudaStreamDestroy(s); }
};

TEST(CachingAllocator, AFreedBlockComesBackForItsSize) {
  SKIP_WITHOUT_GPU();
  ladder::empty_cache();  // so the pool holds no other block of these sizes
  const ladder::MemoryTotals start = memory_totals();
  void* a = device_allocate(1000);  // rounded to 1024
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 256, 0u);
  EXPECT_EQ(memory_totals().allocated, start.allocated + 1024);
  const int64_t reserved = memory_totals().reserved;
  EXPECT_GE(reserved, start.reserved);
  device_free(a);
  EXPECT_EQ(memory_totals().allocated, start.allocated);
  EXPECT_EQ(memory_totals().reserved, reserved);  // cached, not given back
  void* b = device_allocate(1020);                // the same rounded size: the same block, no new reservation
  EXPECT_EQ(b, a);
  EXPECT_EQ(memory_totals().reserved, reserved);
  void* c = device_allocate(1025);  // another size: another block
  EXPECT_NE(c, a);
  EXPECT_EQ(memory_totals().allocated, start.allocated + 1024 + 1536);
  device_free(b);
  device_free(c);
  device_free(nullptr);  // ignored
  EXPECT_EQ(memory_totals().allocated, start.allocated);
  ladder::empty_cache();
  EXPECT_LE(memory_totals().reserved, reserved);
}

TEST(CachingAllocator, PeakFollowsTheHighestAllocation) {
  SKIP_WITHOUT_GPU();
  ladder::reset_peak_allocated();
  const int64_t base = memory_totals().allocated;
  void* a = device_allocate(4096);
  void* b = device_allocate(8192);
  device_free(a);
  device_free(b);
  EXPECT_EQ(memory_totals().peak_allocated, base + 4096 + 8192);
  ladder::reset_peak_allocated();
  EXPECT_EQ(memory_totals().peak_allocated, base);
}

TEST(CachingAllocator, PoisonedBlocksAreNaNEvenWhenReused) {
  SKIP_WITHOUT_GPU();
  ladder::empty_cache();
  void* a = device_allocate(2048);
  CUDA_CHECK(cudaMemset(a, 0, 2048));
  device_free(a);
  const ladder::PoisonAllocations poison;
  void* b = device_allocate(2048);
  ASSERT_EQ(b, a);  // the reused block, holding zeros before
  std::vector<uint16_t> bits(1024);
  CUDA_CHECK(cudaMemcpy(bits.data(), b, 2048, cudaMemcpyDeviceToHost));
  for (uint16_t v : bits) ASSERT_EQ(v, 0xFFFF);
  device_free(b);
}

// One pool per device: a request is served on the device current when it is made, and a block goes back to the pool of
// the device it came from, whichever device is current at the free. (With one pool for all, a block GPU 0 freed was
// handed to GPU 1, and the first cudaMemset on it failed: 04's every-GPU test on four H100s.) Needs two GPUs.
TEST(CachingAllocator, EachDeviceHasItsOwnPool) {
  SKIP_WITHOUT_GPU();
  int devices = 0, first = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  CUDA_CHECK(cudaGetDevice(&first));
  if (devices < 2) GTEST_SKIP() << "needs 2 GPUs (this machine has " << devices << ")";
  const int other = first == 0 ? 1 : 0;
  ladder::empty_cache();
  void* a = device_allocate(4096);
  const int64_t first_allocated = memory_totals().allocated;
  CUDA_CHECK(cudaSetDevice(other));
  const int64_t other_allocated = memory_totals().allocated;
  device_free(a);  // freed while the other device is current: back to its own device's pool
  EXPECT_EQ(memory_totals().allocated, other_allocated);
  void* b = device_allocate(4096);
  EXPECT_NE(b, a);
  cudaPointerAttributes where{};
  CUDA_CHECK(cudaPointerGetAttributes(&where, b));
  EXPECT_EQ(where.device, other);
  CUDA_CHECK(cudaMemset(b, 0, 4096));
  device_free(b);
  CUDA_CHECK(cudaSetDevice(first));
  EXPECT_EQ(memory_totals().allocated, first_allocated - 4096);
  void* c = device_allocate(4096);
  EXPECT_EQ(c, a);  // the block came back to this device's pool
  CUDA_CHECK(cudaMemset(c, 0, 4096));
  device_free(c);
  ladder::empty_cache();
}

TEST(CachingAllocator, TensorsGiveTheirBlocksBack) {
  SKIP_WITHOUT_GPU();
  const int64_t base = memory_totals().allocated;
  {
    const ladder::Tensor t = ladder::empty({100, 30}, ladder::DType::BF16);  // 6000 bytes -> 6144
    const ladder::Tensor view = t.reshape({3000});
    EXPECT_EQ(memory_totals().allocated, base + 6144);
  }
  EXPECT_EQ(memory_totals().allocated, base);
  const auto two_pib = [] { ladder::empty({int64_t{1} << 40, 1024}, ladder::DType::BF16); };
  EXPECT_TRUE(throws_error(two_pib, "tensor needs 2097152.00 GiB but the GPU has only"));  // memory.h's words
}

// Freeing a block twice, or a pointer the pool never handed out, is refused in one line; before, both were ignored,
// and a second free of a block handed out again in between would have given a live tensor's memory to the next one.
TEST(CachingAllocator, RefusesADoubleFreeAndForeignPointers) {
  SKIP_WITHOUT_GPU();
  void* a = device_allocate(1000);
  device_free(a);
  EXPECT_TRUE(throws_error([&] { device_free(a); }, "was freed already (a double free)"));
  EXPECT_TRUE(throws_error([&] { ladder::record_stream(a, nullptr); }, "is not a block handed out by device_allocate"));
  int on_the_host = 0;
  EXPECT_TRUE(throws_error([&] { device_free(&on_the_host); }, "is not a block from device_allocate"));
  void* raw = nullptr;  // device memory, but not the pool's
  CUDA_CHECK(cudaMalloc(&raw, 512));
  EXPECT_TRUE(throws_error([&] { device_free(raw); }, "is not a block from device_allocate"));
  CUDA_CHECK(cudaFree(raw));
  // The refused second free left the pool as it was: the block comes back once, not twice.
  void* b = device_allocate(1000);
  void* c = device_allocate(1000);
  EXPECT_NE(b, c);
  device_free(b);
  device_free(c);
}

// A block that work on another stream uses (record_stream) is not handed out again until that stream has passed the
// point where it was freed: here the side stream is held at a host function, as a collective still reading the block
// would hold it. Without the wait, the next request of its size got the block at once.
TEST(CachingAllocator, ABlockUsedOnAnotherStreamWaitsForIt) {
  SKIP_WITHOUT_GPU();
  ladder::empty_cache();
  const SideStream side;
  void* a = device_allocate(3072);
  void* b = nullptr;
  {
    StreamGate gate(side.s);
    ladder::record_stream(a, side.s);
    ladder::record_stream(a, ladder::current_stream());  // the stream it was allocated on: nothing to wait for
    device_free(a);
    b = device_allocate(3072);
    EXPECT_NE(b, a) << "a block the side stream may still use was handed out again";
    gate.release();
  }  // the side stream has passed the free's event
  void* c = device_allocate(3072);
  EXPECT_EQ(c, a) << "the block did not come back once its stream had passed";
  device_free(b);
  device_free(c);
  ladder::empty_cache();
  EXPECT_EQ(memory_totals().allocated, memory_totals().reserved);  // nothing left waiting or cached
}

// empty_cache() gives back a block that still waits for its streams too, after waiting for them.
TEST(CachingAllocator, EmptyCacheWaitsForTheStreamsOfAFreedBlock) {
  SKIP_WITHOUT_GPU();
  ladder::empty_cache();
  const int64_t reserved = memory_totals().reserved;
  const SideStream side;
  void* a = device_allocate(5120);
  ladder::record_stream(a, side.s);
  device_free(a);
  EXPECT_EQ(memory_totals().reserved, reserved + 5120);
  ladder::empty_cache();
  EXPECT_EQ(memory_totals().reserved, reserved);
}

// The poison is queued on the stream the block is handed out on: work queued there before (the block's last user,
// here a held stream) runs first. Before, a cudaMemset on the legacy stream ran at once, beside that work.
TEST(CachingAllocator, ThePoisonRunsOnTheBlocksStream) {
  SKIP_WITHOUT_GPU();
  ladder::empty_cache();
  void* a = device_allocate(2048);
  CUDA_CHECK(cudaMemset(a, 0, 2048));
  CUDA_CHECK(cudaDeviceSynchronize());
  device_free(a);
  const SideStream side;
  ladder::set_current_stream(side.s);
  std::vector<uint16_t> before(1024, 1), after(1024, 1);
  void* b = nullptr;
  {
    StreamGate gate(side.s);
    const ladder::PoisonAllocations poison;
    b = device_allocate(2048);
    // A copy on the legacy stream, which does not wait for the non-blocking side stream: the block as it is now.
    CUDA_CHECK(cudaMemcpy(before.data(), b, 2048, cudaMemcpyDeviceToHost));
    gate.release();
  }
  ladder::set_current_stream(nullptr);
  CUDA_CHECK(cudaMemcpy(after.data(), b, 2048, cudaMemcpyDeviceToHost));
  EXPECT_EQ(b, a);
  EXPECT_EQ(before[0], 0) << "the poison ran before the work queued earlier on the block's stream";
  for (uint16_t v : after) ASSERT_EQ(v, 0xFFFF);
  device_free(b);
}

// A cudaFree that fails, counting its calls. It gives the block back all the same, so that nothing leaks and nothing is
// freed twice, whichever block it fails on.
int failed_frees = 0;
cudaError_t failing_cuda_free(void* p) {
  ++failed_frees;
  CUDA_CHECK(cudaFree(p));
  return cudaErrorInvalidValue;
}

// Swaps the allocator's cudaFree for `f` while it lives.
class SwapCudaFree {
 public:
  explicit SwapCudaFree(ladder::CudaFree f) : before_(ladder::replace_cuda_free_for_tests(f)) {}
  ~SwapCudaFree() { ladder::replace_cuda_free_for_tests(before_); }
  SwapCudaFree(const SwapCudaFree&) = delete;
  SwapCudaFree& operator=(const SwapCudaFree&) = delete;

 private:
  ladder::CudaFree before_;
};

// empty_cache() reports a failed cudaFree in one line that names it, where the pool gives the block back. Before, the
// pool ignored what cudaFree returned: the block was forgotten and the error went unsaid (or, a sticky one, was blamed
// on a later call).
TEST(CachingAllocator, AFailedCudaFreeIsReportedWhereItHappens) {
  SKIP_WITHOUT_GPU();
  ladder::empty_cache();  // so that the pool holds only the block below, whose cudaFree fails
  void* a = device_allocate(7168);
  device_free(a);
  failed_frees = 0;
  {
    const SwapCudaFree failing(&failing_cuda_free);
    EXPECT_TRUE(throws_error([] { ladder::empty_cache(); },
                             "(cudaErrorInvalidValue) in `cudaFree(p)` at common/gpu/allocator.cpp:"));
  }
  EXPECT_EQ(failed_frees, 1);  // the first failure is the one reported
  ladder::empty_cache();       // the real cudaFree again: nothing left to fail
}

}  // namespace
