#include "gpu/memory.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdint>
#include <exception>

#include "cuda/check.h"
#include "gpu/allocator.h"

namespace ladder {

Tensor empty(const Shape& shape, DType dtype) {
  Tensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = contiguous_strides(shape);
  // Multiply in long double so that absurd shapes give the "does not fit" message below instead of overflowing.
  long double want = dtype_size(dtype);
  for (int64_t s : shape) {
    if (s < 0) throw Error("empty: negative size in " + shape_str(shape));
    want *= s;
  }
  const size_t bytes = want > 1e18L ? ~size_t{0} : t.nbytes();
  if (bytes == 0) return t;
  // From the caching pool (allocator.h): no cudaMalloc once a block of this size has been used and freed.
  void* p = bytes > (size_t{1} << 62) ? nullptr : device_allocate(bytes);
  if (!p) {
    // Say what did not fit in words a reader can act on, instead of a bare cudaErrorMemoryAllocation.
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    throw Error(
        fmt::format("a {} {} tensor needs {:.2f} GiB but the GPU has only {:.2f} GiB free (of {:.2f} GiB); "
                    "use smaller sizes",
                    dtype_name(dtype), shape_str(shape), double(want) / 1073741824.0, free_bytes / 1073741824.0,
                    total_bytes / 1073741824.0));
  }
  // A deleter must not throw (it runs in destructors): a failed free is said in one line, and its block stays out of
  // the pool (allocator.cpp).
  t.storage = std::shared_ptr<void>(p, [](void* q) {
    try {
      device_free(q);
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {} (freeing a tensor)\n", e.what());
    }
  });
  t.data = p;
  return t;
}

void require_fits(const std::vector<Shape>& shapes, DType dtype) {
  long double want = 0;
  std::string all;
  for (const Shape& shape : shapes) {
    long double b = dtype_size(dtype);
    for (int64_t s : shape) b *= s;
    want += b;
    all += (all.empty() ? "" : " + ") + shape_str(shape);
  }
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (want > static_cast<long double>(free_bytes))
    throw Error(fmt::format(
        "{} {} tensors need {:.2f} GiB but the GPU has only {:.2f} GiB free (of {:.2f} GiB); "
        "use smaller sizes",
        dtype_name(dtype), all, double(want) / 1073741824.0, free_bytes / 1073741824.0, total_bytes / 1073741824.0));
}

void poison(const Tensor& t) {
  if (!t.is_contiguous()) throw Error("poison: expects a contiguous tensor");
  CUDA_CHECK(cudaMemset(t.data, 0xFF, t.nbytes()));
}

void record_stream(const Tensor& t, cudaStream_t stream) {
  if (t.storage) ladder::record_stream(t.storage.get(), stream);
}

Tensor to_device(const std::vector<float>& values, const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw Error(fmt::format("to_device: {} values for shape {}", values.size(), shape_str(shape)));
  if (dtype == DType::F32) {
    CUDA_CHECK(cudaMemcpy(t.data, values.data(), t.nbytes(), cudaMemcpyHostToDevice));
  } else {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i) bits[i] = float_to_bf16_bits(values[i]);
    CUDA_CHECK(cudaMemcpy(t.data, bits.data(), t.nbytes(), cudaMemcpyHostToDevice));
  }
  return t;
}

std::vector<float> to_host(const Tensor& t) {
  if (!t.is_contiguous()) throw Error("to_host: expects a contiguous tensor, got strides " + shape_str(t.strides));
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (t.dtype == DType::F32) {
    CUDA_CHECK(cudaMemcpy(out.data(), t.data, t.nbytes(), cudaMemcpyDeviceToHost));
  } else {
    std::vector<uint16_t> bits(out.size());
    CUDA_CHECK(cudaMemcpy(bits.data(), t.data, t.nbytes(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < out.size(); ++i) out[i] = bf16_bits_to_float(bits[i]);
  }
  return out;
}

}  // namespace ladder
