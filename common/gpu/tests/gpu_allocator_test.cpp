// The caching allocator (gpu/allocator.h) on a GPU: a freed block waits in the pool and comes back for the next
// request of its size without a cudaMalloc, the totals say what is handed out and what is held, poisoned blocks are
// NaN, and tensors give their blocks back when their last view goes. Without a GPU every test skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cuda/check.h"
#include "cuda/tests/require_gpu.h"
#include "gpu/allocator.h"
#include "gpu/memory.h"

namespace {

using ladder::device_allocate;
using ladder::device_free;
using ladder::memory_totals;

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
  if (devices < 2) GTEST_SKIP() << "one GPU: nothing to keep apart";
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
  EXPECT_THROW(ladder::empty({int64_t{1} << 40, 1024}, ladder::DType::BF16), ladder::Error);  // 2 PiB: the message
}

}  // namespace
