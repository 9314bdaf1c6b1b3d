// See allocator.h.
#include "gpu/allocator.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cuda/check.h"
#include "gpu/stream.h"
#include "profiler/profiler.h"

namespace ladder {
namespace {

// Every block taken from the driver, from its cudaMalloc to its cudaFree.
struct Block {
  size_t bytes = 0;  // rounded
  int device = 0;
  bool live = false;                   // handed out: between device_allocate and device_free
  cudaStream_t stream = nullptr;       // the current stream when it was handed out
  std::vector<cudaStream_t> used_on;   // other streams that use it (record_stream)
  std::vector<cudaEvent_t> waits_for;  // after the free: an event on each of those streams
};

struct DevicePool {
  std::multimap<size_t, void*> cached;  // rounded size -> a free block of that size on this device
  std::vector<void*> pending;           // freed blocks whose events have not all completed yet
  MemoryTotals totals;
};

// Runs f() with `device` current, then makes current again the device that was.
template <class F>
void on_device(int device, F&& f) {
  int current = 0;
  CUDA_CHECK(cudaGetDevice(&current));
  if (current == device) return f();
  CUDA_CHECK(cudaSetDevice(device));
  try {
    f();
  } catch (...) {
    cudaSetDevice(current);  // unchecked: the error on its way out is the one to report
    throw;
  }
  CUDA_CHECK(cudaSetDevice(current));
}

// True once every event the block waits for has completed; then they are destroyed.
bool streams_passed(Block& b, bool wait) {
  for (cudaEvent_t e : b.waits_for) {
    if (wait) CUDA_CHECK(cudaEventSynchronize(e));
    const cudaError_t done = cudaEventQuery(e);
    if (done == cudaErrorNotReady) return false;
    check_cuda(done, "cudaEventQuery(e)", __FILE__, __LINE__);
  }
  for (cudaEvent_t e : b.waits_for) CUDA_CHECK(cudaEventDestroy(e));
  b.waits_for.clear();
  return true;
}

struct Pools {
  std::mutex mutex;
  std::vector<DevicePool> devices;          // index: the CUDA device
  std::unordered_map<void*, Block> blocks;  // every block we hold, handed out or not
  int poison = 0;                           // live PoisonAllocations
  CudaFree cuda_free = &cudaFree;           // replace_cuda_free_for_tests

  DevicePool& on(int device) {  // with the mutex held
    if (device >= static_cast<int>(devices.size())) devices.resize(device + 1);
    return devices[device];
  }
  // Moves the pending blocks whose streams have passed their events into the pool; with `wait`, waits for them all
  // (with the mutex held).
  void collect(DevicePool& d, bool wait) {
    for (auto it = d.pending.begin(); it != d.pending.end();) {
      Block& b = blocks.at(*it);
      if (!streams_passed(b, wait)) {
        ++it;
        continue;
      }
      d.cached.emplace(b.bytes, *it);
      it = d.pending.erase(it);
    }
  }
  // Gives `device`'s cached blocks back to the driver, with that device current (with the mutex held).
  void release_cached(int device) {
    DevicePool& d = on(device);
    if (d.cached.empty() && d.pending.empty()) return;
    on_device(device, [&] {
      collect(d, /*wait=*/true);
      while (!d.cached.empty()) {
        const auto [bytes, p] = *d.cached.begin();
        d.cached.erase(d.cached.begin());
        blocks.erase(p);
        d.totals.reserved -= static_cast<int64_t>(bytes);
        check_cuda(cuda_free(p), "cudaFree(p)", __FILE__, __LINE__);  // cuda_free is cudaFree outside a test
      }
    });
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

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

void* device_allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t rounded = (bytes + kBlockRound - 1) / kBlockRound * kBlockRound;
  const int device = current_device();
  const cudaStream_t stream = current_stream();
  Pools& pl = pools();
  void* p = nullptr;
  MemoryTotals after;
  bool poison = false;
  {
    std::lock_guard<std::mutex> lock(pl.mutex);
    DevicePool& d = pl.on(device);
    // Events cannot be queried while a CUDA graph is captured: the pending blocks wait for the next request.
    if (!d.pending.empty() && !capturing(stream)) pl.collect(d, /*wait=*/false);
    if (auto it = d.cached.find(rounded); it != d.cached.end()) {
      p = it->second;
      d.cached.erase(it);
    } else {
      cudaError_t err = cudaMalloc(&p, rounded);
      if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // clear the failed allocation's error; try again with the pool given back
        pl.release_cached(device);
        err = cudaMalloc(&p, rounded);
        if (err == cudaErrorMemoryAllocation) {
          cudaGetLastError();
          return nullptr;
        }
      }
      check_cuda(err, "cudaMalloc(&p, rounded)", __FILE__, __LINE__);  // any other error is not "it does not fit"
      Block& fresh = pl.blocks[p];
      fresh.bytes = rounded;
      fresh.device = device;
      d.totals.reserved += static_cast<int64_t>(rounded);
    }
    Block& b = pl.blocks.at(p);
    b.live = true;
    b.stream = stream;
    d.totals.allocated += static_cast<int64_t>(rounded);
    d.totals.peak_allocated = std::max(d.totals.peak_allocated, d.totals.allocated);
    after = d.totals;
    poison = pl.poison > 0;
  }
  // On the block's stream, before the work its user queues there next.
  if (poison) CUDA_CHECK(cudaMemsetAsync(p, 0xFF, rounded, stream));
  record_memory(reinterpret_cast<int64_t>(p), static_cast<int64_t>(rounded), after.allocated, after.reserved, device);
  return p;
}

void device_free(void* p) {
  if (!p) return;
  Pools& pl = pools();
  MemoryTotals after;
  Block freed;
  {
    std::lock_guard<std::mutex> lock(pl.mutex);
    auto it = pl.blocks.find(p);
    if (it == pl.blocks.end()) throw Error(fmt::format("device_free: {} is not a block from device_allocate", p));
    Block& b = it->second;
    if (!b.live) throw Error(fmt::format("device_free: {} was freed already (a double free)", p));
    DevicePool& d = pl.on(b.device);
    if (b.used_on.empty()) {
      d.cached.emplace(b.bytes, p);
    } else {
      // An event on each other stream, now: the block is reused once each of them has passed this point. Should a
      // call fail, the block stays out of the pool for good (live), the safe side.
      on_device(b.device, [&] {
        for (cudaStream_t s : b.used_on) {
          cudaEvent_t e = nullptr;
          CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
          b.waits_for.push_back(e);
          CUDA_CHECK(cudaEventRecord(e, s));
        }
      });
      b.used_on.clear();
      d.pending.push_back(p);
    }
    b.live = false;
    d.totals.allocated -= static_cast<int64_t>(b.bytes);
    after = d.totals;
    freed = b;
  }
  record_memory(reinterpret_cast<int64_t>(p), -static_cast<int64_t>(freed.bytes), after.allocated, after.reserved,
                freed.device);
}

void record_stream(void* p, cudaStream_t stream) {
  Pools& pl = pools();
  std::lock_guard<std::mutex> lock(pl.mutex);
  auto it = pl.blocks.find(p);
  if (it == pl.blocks.end() || !it->second.live)
    throw Error(fmt::format("record_stream: {} is not a block handed out by device_allocate and not yet freed", p));
  Block& b = it->second;
  if (stream != b.stream && std::find(b.used_on.begin(), b.used_on.end(), stream) == b.used_on.end())
    b.used_on.push_back(stream);
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

CudaFree replace_cuda_free_for_tests(CudaFree f) {
  Pools& pl = pools();
  std::lock_guard<std::mutex> lock(pl.mutex);
  return std::exchange(pl.cuda_free, f);
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
