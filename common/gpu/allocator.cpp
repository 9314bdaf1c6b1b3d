// See allocator.h.
#include "gpu/allocator.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>

#include "cuda/check.h"
#include "profiler/profiler.h"

namespace ladder {
namespace {

struct Pool {
  std::mutex mutex;
  std::multimap<size_t, void*> cached;     // rounded size -> a free block of that size
  std::unordered_map<void*, size_t> live;  // blocks handed out -> their rounded size
  MemoryTotals totals;
  int poison = 0;  // live PoisonAllocations
  int device = 0;

  void release_cached() {  // with the mutex held
    for (const auto& [bytes, p] : cached) {
      cudaFree(p);
      totals.reserved -= static_cast<int64_t>(bytes);
    }
    cached.clear();
  }
};

// Never destroyed: tensors in static storage may be freed after main returns, and their blocks must find the pool.
Pool& pool() {
  static Pool* p = [] {
    auto* q = new Pool;
    cudaGetDevice(&q->device);
    return q;
  }();
  return *p;
}

}  // namespace

void* device_allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t rounded = (bytes + kBlockRound - 1) / kBlockRound * kBlockRound;
  Pool& pl = pool();
  void* p = nullptr;
  MemoryTotals after;
  bool poison = false;
  {
    std::lock_guard<std::mutex> lock(pl.mutex);
    if (auto it = pl.cached.find(rounded); it != pl.cached.end()) {
      p = it->second;
      pl.cached.erase(it);
    } else {
      if (cudaMalloc(&p, rounded) != cudaSuccess) {
        cudaGetLastError();  // clear the failed allocation's error; try again with the pool given back
        pl.release_cached();
        if (cudaMalloc(&p, rounded) != cudaSuccess) {
          cudaGetLastError();
          return nullptr;
        }
      }
      pl.totals.reserved += static_cast<int64_t>(rounded);
    }
    pl.live[p] = rounded;
    pl.totals.allocated += static_cast<int64_t>(rounded);
    pl.totals.peak_allocated = std::max(pl.totals.peak_allocated, pl.totals.allocated);
    after = pl.totals;
    poison = pl.poison > 0;
  }
  if (poison) CUDA_CHECK(cudaMemset(p, 0xFF, rounded));
  record_memory(reinterpret_cast<int64_t>(p), static_cast<int64_t>(rounded), after.allocated, after.reserved,
                pl.device);
  return p;
}

void device_free(void* p) {
  if (!p) return;
  Pool& pl = pool();
  MemoryTotals after;
  size_t rounded = 0;
  {
    std::lock_guard<std::mutex> lock(pl.mutex);
    auto it = pl.live.find(p);
    if (it == pl.live.end()) return;  // not ours: nothing to give back
    rounded = it->second;
    pl.live.erase(it);
    pl.cached.emplace(rounded, p);
    pl.totals.allocated -= static_cast<int64_t>(rounded);
    after = pl.totals;
  }
  record_memory(reinterpret_cast<int64_t>(p), -static_cast<int64_t>(rounded), after.allocated, after.reserved,
                pl.device);
}

MemoryTotals memory_totals() {
  Pool& pl = pool();
  std::lock_guard<std::mutex> lock(pl.mutex);
  return pl.totals;
}

void reset_peak_allocated() {
  Pool& pl = pool();
  std::lock_guard<std::mutex> lock(pl.mutex);
  pl.totals.peak_allocated = pl.totals.allocated;
}

void empty_cache() {
  Pool& pl = pool();
  std::lock_guard<std::mutex> lock(pl.mutex);
  pl.release_cached();
}

PoisonAllocations::PoisonAllocations() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  ++pool().poison;
}
PoisonAllocations::~PoisonAllocations() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  --pool().poison;
}

}  // namespace ladder
