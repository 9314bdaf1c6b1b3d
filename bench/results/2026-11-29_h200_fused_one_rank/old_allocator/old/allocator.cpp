// See allocator.h.
#include "gpu/allocator.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cuda/check.h"
#include "profiler/profiler.h"

namespace ladder {
namespace {

struct DevicePool {
  std::multimap<size_t, void*> cached;  // rounded size -> a free block of that size on this device
  MemoryTotals totals;
};

struct Block {
  size_t bytes;  // rounded
  int device;
};

struct Pools {
  std::mutex mutex;
  std::vector<DevicePool> devices;          // index: the CUDA device
  std::unordered_map<void*, Block> live;    // blocks handed out
  int poison = 0;                           // live PoisonAllocations
  CudaFree cuda_free = &cudaFree;           // added: replace_cuda_free_for_tests

  DevicePool& on(int device) {  // with the mutex held
    if (device >= static_cast<int>(devices.size())) devices.resize(device + 1);
    return devices[device];
  }
  // Gives `device`'s cached blocks back to the driver, with that device current (with the mutex held).
  void release_cached(int device) {
    DevicePool& d = on(device);
    if (d.cached.empty()) return;
    int current = 0;
    cudaGetDevice(&current);
    if (current != device) cudaSetDevice(device);
    for (const auto& [bytes, p] : d.cached) {
      cuda_free(p);  // added: was cudaFree(p); its result ignored as before
      d.totals.reserved -= static_cast<int64_t>(bytes);
    }
    d.cached.clear();
    if (current != device) cudaSetDevice(current);
  }
};

// Never destroyed: tensors in static storage may be freed after main returns, and their blocks must find the pool.
Pools& pools() {
  static Pools* p = new Pools;
  return *p;
}

int current_device() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

}  // namespace

void* device_allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t rounded = (bytes + kBlockRound - 1) / kBlockRound * kBlockRound;
  const int device = current_device();
  Pools& pl = pools();
  void* p = nullptr;
  MemoryTotals after;
  bool poison = false;
  {
    std::lock_guard<std::mutex> lock(pl.mutex);
    DevicePool& d = pl.on(device);
    if (auto it = d.cached.find(rounded); it != d.cached.end()) {
      p = it->second;
      d.cached.erase(it);
    } else {
      if (cudaMalloc(&p, rounded) != cudaSuccess) {
        cudaGetLastError();  // clear the failed allocation's error; try again with the pool given back
        pl.release_cached(device);
        if (cudaMalloc(&p, rounded) != cudaSuccess) {
          cudaGetLastError();
          return nullptr;
        }
      }
      d.totals.reserved += static_cast<int64_t>(rounded);
    }
    pl.live[p] = Block{rounded, device};
    d.totals.allocated += static_cast<int64_t>(rounded);
    d.totals.peak_allocated = std::max(d.totals.peak_allocated, d.totals.allocated);
    after = d.totals;
    poison = pl.poison > 0;
  }
  if (poison) CUDA_CHECK(cudaMemset(p, 0xFF, rounded));
  record_memory(reinterpret_cast<int64_t>(p), static_cast<int64_t>(rounded), after.allocated, after.reserved, device);
  return p;
}

void device_free(void* p) {
  if (!p) return;
  Pools& pl = pools();
  MemoryTotals after;
  Block block{};
  {
    std::lock_guard<std::mutex> lock(pl.mutex);
    auto it = pl.live.find(p);
    if (it == pl.live.end()) return;  // not ours: nothing to give back
    block = it->second;
    pl.live.erase(it);
    DevicePool& d = pl.on(block.device);
    d.cached.emplace(block.bytes, p);
    d.totals.allocated -= static_cast<int64_t>(block.bytes);
    after = d.totals;
  }
  record_memory(reinterpret_cast<int64_t>(p), -static_cast<int64_t>(block.bytes), after.allocated, after.reserved,
                block.device);
}

MemoryTotals memory_totals() {
  const int device = current_device();
  Pools& pl = pools();
  std::lock_guard<std::mutex> lock(pl.mutex);
  return pl.on(device).totals;
}

void reset_peak_allocated() {
  const int device = current_device();
  Pools& pl = pools();
  std::lock_guard<std::mutex> lock(pl.mutex);
  MemoryTotals& t = pl.on(device).totals;
  t.peak_allocated = t.allocated;
}

void empty_cache() {
  Pools& pl = pools();
  std::lock_guard<std::mutex> lock(pl.mutex);
  for (int device = 0; device < static_cast<int>(pl.devices.size()); ++device) pl.release_cached(device);
}

// Added: see allocator.h.
void record_stream(void*, cudaStream_t) {}

CudaFree replace_cuda_free_for_tests(CudaFree f) {
  std::lock_guard<std::mutex> lock(pools().mutex);
  const CudaFree before = pools().cuda_free;
  pools().cuda_free = f;
  return before;
}

PoisonAllocations::PoisonAllocations() {
  std::lock_guard<std::mutex> lock(pools().mutex);
  ++pools().poison;
}
PoisonAllocations::~PoisonAllocations() {
  std::lock_guard<std::mutex> lock(pools().mutex);
  --pools().poison;
}

}  // namespace ladder
