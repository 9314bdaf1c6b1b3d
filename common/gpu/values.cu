// gpu/values.h: random inputs made on the GPU (one kernel) or recomputed on the CPU, and the looks at an output a check
// needs without copying all of it to the host (its checksum; are all elements finite; the values at a few indices).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/random.h"
#include "gpu/values.h"

namespace ladder {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill the GPU; each thread loops over the tensor with a grid stride, so any n fits one launch.
unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 4096 ? blocks : 4096);
}

__device__ float load_as_float(const void* p, int64_t i, bool bf16) {
  return bf16 ? __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]) : static_cast<const float*>(p)[i];
}

__global__ void fill_uniform(void* out, int64_t n, bool bf16, uint64_t seed, float lo, float hi) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = uniform_at(seed, uint64_t(i), lo, hi);
    if (bf16)
      static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16(v);  // to nearest even, like float_to_bf16_bits
    else
      static_cast<float*>(out)[i] = v;
  }
}

// counts[0] += non-finite elements; counts[1] = min index of one.
__global__ void find_nonfinite(const void* p, int64_t n, bool bf16, unsigned long long* counts) {
  unsigned long long mine = 0, first = ~0ull;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    if (!isfinite(load_as_float(p, i, bf16))) {
      if (mine++ == 0) first = static_cast<unsigned long long>(i);
    }
  }
  if (mine) {
    atomicAdd(&counts[0], mine);
    atomicMin(&counts[1], first);
  }
}

__global__ void gather(const void* p, bool bf16, const int64_t* idx, int64_t n, float* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = load_as_float(p, idx[i], bf16);
}

// Scratch device memory for these helpers, freed on every path.
std::shared_ptr<void> scratch(size_t bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, bytes));
  return std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
}

}  // namespace

float random_value(uint64_t seed, int64_t i, DType dtype, float lo, float hi) {
  return round_to(dtype, uniform_at(seed, static_cast<uint64_t>(i), lo, hi));
}

std::vector<float> random_values(int64_t n, uint64_t seed, DType dtype, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = random_value(seed, i, dtype, lo, hi);
  return v;
}

Tensor random_tensor(const Shape& shape, uint64_t seed, DType dtype, float lo, float hi) {
  Tensor t = empty(shape, dtype);
  const int64_t n = t.numel();
  if (n == 0) return t;
  fill_uniform<<<grid_for(n), kThreads>>>(t.data, n, dtype == DType::BF16, seed, lo, hi);
  CUDA_CHECK_LAUNCH();
  return t;
}

uint64_t checksum(const Tensor& t) {
  if (!t.is_contiguous()) throw Error("checksum: expects a contiguous tensor");
  std::vector<unsigned char> bytes(t.nbytes());
  CUDA_CHECK(cudaMemcpy(bytes.data(), t.data, bytes.size(), cudaMemcpyDeviceToHost));
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

NonFinite count_nonfinite(const Tensor& t) {
  if (!t.is_contiguous()) throw Error("count_nonfinite: expects a contiguous tensor");
  const int64_t n = t.numel();
  if (n == 0) return {};
  const auto buf = scratch(2 * sizeof(unsigned long long));
  unsigned long long host[2] = {0, ~0ull};
  CUDA_CHECK(cudaMemcpy(buf.get(), host, sizeof(host), cudaMemcpyHostToDevice));
  find_nonfinite<<<grid_for(n), kThreads>>>(t.data, n, t.dtype == DType::BF16,
                                            static_cast<unsigned long long*>(buf.get()));
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(host, buf.get(), sizeof(host), cudaMemcpyDeviceToHost));
  return {static_cast<int64_t>(host[0]), host[0] ? static_cast<int64_t>(host[1]) : -1};
}

std::vector<float> values_at(const Tensor& t, const std::vector<int64_t>& flat) {
  if (!t.is_contiguous()) throw Error("values_at: expects a contiguous tensor");
  const int64_t n = static_cast<int64_t>(flat.size());
  std::vector<float> out(flat.size());
  if (n == 0) return out;
  for (int64_t i : flat) {
    if (i < 0 || i >= t.numel()) throw Error("values_at: index " + std::to_string(i) + " out of range");
  }
  const auto idx = scratch(n * sizeof(int64_t)), vals = scratch(n * sizeof(float));
  CUDA_CHECK(cudaMemcpy(idx.get(), flat.data(), n * sizeof(int64_t), cudaMemcpyHostToDevice));
  gather<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads>>>(
      t.data, t.dtype == DType::BF16, static_cast<const int64_t*>(idx.get()), n, static_cast<float*>(vals.get()));
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(out.data(), vals.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace ladder
