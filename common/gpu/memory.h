// Device memory: allocating a tensor (with a clear error when it does not fit), poisoning it, and copies between host
// and device.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "gpu/tensor.h"

namespace ladder {

// Allocates an uninitialized contiguous tensor on the current GPU, from the caching pool (gpu/allocator.h): its storage
// goes back to the pool when the last view of it is gone. A shape that does not fit in the GPU's free memory
// throws a ladder::Error that says how much was asked for and how much is free (never a crash).
Tensor empty(const Shape& shape, DType dtype);

// Checks up front that tensors of these shapes fit in the GPU's free memory together, before any host data is made
// for them; throws the same clear error as empty() otherwise.
void require_fits(const std::vector<Shape>& shapes, DType dtype);

// Fill a tensor's bytes with 0xFF: NaN in both float32 and bf16, so an element a kernel forgot to write fails the
// check.
void poison(const Tensor& t);

// Work on `stream`, besides the current stream, uses t's storage (allocator.h's record_stream): the block goes back to
// the pool only after `stream` has passed the point where t's last view was dropped. A view of memory the pool does
// not own (view_of) needs none: ignored.
void record_stream(const Tensor& t, cudaStream_t stream);

// Host values are float: every bf16 value is exactly a float, so nothing is lost on the way back.
Tensor to_device(const std::vector<float>& values, const Shape& shape, DType dtype);
std::vector<float> to_host(const Tensor& t);  // contiguous tensors only

}  // namespace ladder
