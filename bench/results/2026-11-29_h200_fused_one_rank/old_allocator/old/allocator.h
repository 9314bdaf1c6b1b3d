// The ladder's device allocator: a caching pool, as PyTorch's CUDA caching allocator is. A freed block is not given
// back to the driver (cudaFree synchronizes the whole device); it waits in the pool for the next request of its size,
// so after the first step a training loop allocates and frees its activations every step without one cudaMalloc.
// Like PyTorch's allocator it keeps two totals: allocated (bytes of the blocks tensors hold now) and reserved (bytes
// taken from the driver: allocated plus what waits in the pool).
//
// Every allocation and free is also noted in the profiler while one records (profiler/profiler.h, record_memory),
// with both totals: the trace then has the [memory] events a torch.profiler trace has with profile_memory=True, and
// `ladder-trace memory` draws the same curves from ours as from PyTorch's.
//
// As PyTorch's, it keeps one pool and one pair of totals per device: a request is served from the pool of the device
// current when it is made (cudaGetDevice), and a block goes back to the pool of the device it came from, whichever
// device is current when it is freed. Simpler than PyTorch's: a block is reused only by a request of the same rounded
// size (PyTorch also splits large cached segments), and everything on a device runs on one stream, so a block freed
// on the host can be handed out again at once (the work that used it is ordered before the work that will).
#pragma once

#include <cuda_runtime_api.h>  // added: cudaStream_t, cudaError_t for the two declarations below

#include <cstddef>
#include <cstdint>

namespace ladder {

struct MemoryTotals {
  int64_t allocated = 0;       // bytes of the blocks handed out and not freed
  int64_t reserved = 0;        // bytes taken from the driver: allocated plus the pool
  int64_t peak_allocated = 0;  // the most `allocated` has been since the last reset_peak_allocated()
};

// Requests are rounded up to a multiple of kBlockRound bytes, as PyTorch rounds them (512).
constexpr size_t kBlockRound = 512;

// A block of at least `bytes` (> 0) bytes, 256-byte aligned: from the pool when it holds one of this rounded size,
// else from cudaMalloc; when that fails, the pool is emptied and cudaMalloc tried once more. Returns null when the
// memory is not there (the caller says so in words: gpu/memory.h's empty()).
void* device_allocate(size_t bytes);
// Returns a block from device_allocate to the pool. Null is ignored.
void device_free(void* p);

// The totals and the peak of the current device.
MemoryTotals memory_totals();
void reset_peak_allocated();
// Gives every block waiting in every device's pool back to the driver (cudaFree).
void empty_cache();

// Added so that today's tests and memory.cpp compile against this allocator, with its behaviour:
// record_stream does nothing (this pool did not know streams: a freed block was handed out again at once), and the
// cudaFree a test may swap is the one release_cached calls, whose result it ignores as before.
void record_stream(void* p, cudaStream_t stream);
using CudaFree = cudaError_t (*)(void* p);
CudaFree replace_cuda_free_for_tests(CudaFree f);

// While one of these lives, every block handed out is first filled with 0xFF bytes (NaN in float32 and bf16), so an
// element a kernel forgets to write fails a check even when the block comes back from the pool with old values. For
// checked runs only: the fill is a cudaMemset per allocation.
class PoisonAllocations {
 public:
  PoisonAllocations();
  ~PoisonAllocations();
  PoisonAllocations(const PoisonAllocations&) = delete;
  PoisonAllocations& operator=(const PoisonAllocations&) = delete;
};

}  // namespace ladder
