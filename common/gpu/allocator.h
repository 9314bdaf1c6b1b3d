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
// size (PyTorch also splits large cached segments), and one pool serves every stream of a device.
//
// Streams. A block freed on the host goes back to the pool at once, so the allocator relies on stream order: the work
// queued so far on the stream that allocated the block (the current stream then, gpu/stream.h) runs before any work
// queued later on it, and the ladder queues everything on that one stream (a CUDA graph is captured on a stream of its
// own but replayed on the current one). A block that work on another stream also uses (07's NCCL stream) must be
// marked with record_stream(), as torch's Tensor.record_stream(): its free then records an event on each such stream,
// and the block waits outside the pool until every one of those events has completed, so it is never handed out while
// the other stream may still read or write it. (The other choice, refusing a second stream, cannot be made here: the
// allocator never sees which stream a kernel reads a pointer on.)
//
// Every CUDA call is checked where it is made (a ladder::Error naming the call and its line), and a pointer the pool
// did not hand out, or one freed twice, is refused in one line.
#pragma once

#include <cuda_runtime_api.h>

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
// Returns a block from device_allocate to the pool (or, if record_stream() marked it, to the wait for its streams).
// Null is ignored. Throws a ladder::Error for a pointer device_allocate did not hand out, or one already freed.
void device_free(void* p);
// Marks the block `p` (handed out and not yet freed) as used by work queued on `stream` too, besides the stream that
// was current when it was allocated: after device_free it is reused only once `stream` has passed that point. The
// stream must outlive the free. Throws a ladder::Error for a pointer that is not a live block.
void record_stream(void* p, cudaStream_t stream);

// The totals and the peak of the current device.
MemoryTotals memory_totals();
void reset_peak_allocated();
// Gives every block waiting in every device's pool back to the driver (cudaFree), after waiting for the streams that
// blocks freed after record_stream() wait for.
void empty_cache();

// For tests: the function the pool gives a block back to the driver with, cudaFree until replaced. Returns the one it
// replaces. A test swaps in one that fails, to see empty_cache() report the failure in one line that names cudaFree.
using CudaFree = cudaError_t (*)(void* p);
CudaFree replace_cuda_free_for_tests(CudaFree f);

// While one of these lives, every block handed out is first filled with 0xFF bytes (NaN in float32 and bf16), so an
// element a kernel forgets to write fails a check even when the block comes back from the pool with old values. For
// checked runs only: the fill is a cudaMemsetAsync per allocation, on the current stream (where the block's first
// user will run).
class PoisonAllocations {
 public:
  PoisonAllocations();
  ~PoisonAllocations();
  PoisonAllocations(const PoisonAllocations&) = delete;
  PoisonAllocations& operator=(const PoisonAllocations&) = delete;
};

}  // namespace ladder
