#include <cuda_bf16.h>

#include "01_matmul_add/kernels.cuh"
#include "cuda/check.h"
#include "gpu/ops.h"
#include "gpu/stream.h"

namespace ch01 {

namespace {

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T>
__device__ inline T from_float(float x);
template <>
__device__ inline float from_float<float>(float x) {
  return x;
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}  // round to nearest even

// One thread per output element. The column index j = i % cols picks the bias; neighbouring threads read neighbouring
// elements of a and y (coalesced) and mostly the same few bias values (served from cache). No pointer is __restrict__:
// y may be a itself (in place, see kernels.cuh), which __restrict__ would declare impossible; in place is safe without
// it, since each element of y is read (as a, or as b when the output is one row) only by the thread that writes it.
template <class T>
__global__ void add_bias_plain(const T* a, const T* b, T* y, int64_t n, int64_t cols) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = from_float<T>(to_float(a[i]) + to_float(b[i % cols]));
}

// Like every launcher: any n >= 0 (n = 0 launches nothing: a grid of zero blocks is a launch error), and the launch
// is checked, so a bad configuration fails here and not in whatever CUDA call comes next.
template <class T>
void launch_plain_t(const void* a, const void* b, void* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 0x7fffffff) throw ladder::Error("add: tensor too large for one launch");
  add_bias_plain<T><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(y), n, cols);
  CUDA_CHECK_LAUNCH();
}

void launch_plain(const void* a, const void* b, void* y, int64_t rows, int64_t cols, ladder::DType dtype,
                  cudaStream_t stream) {
  if (dtype == ladder::DType::F32)
    launch_plain_t<float>(a, b, y, rows, cols, stream);
  else
    launch_plain_t<__nv_bfloat16>(a, b, y, rows, cols, stream);
}

}  // namespace

const std::vector<ladder::Variant<AddLaunch>>& add_variants() {
  static const std::vector<ladder::Variant<AddLaunch>> list = {
      {"plain", "one element per thread", launch_plain},
  };
  return list;
}

void add(const ladder::Tensor& a, const ladder::Tensor& bias, const ladder::Tensor& out, const char* variant) {
  ladder::OpRange r("aten::add", {&a, &bias});
  using ladder::Error;
  if (a.dim() != 2 || !a.is_contiguous() || out.shape != a.shape || !out.is_contiguous())
    throw Error("add: a and out must be contiguous and of one 2-D shape, got " + ladder::shape_str(a.shape) + " and " +
                ladder::shape_str(out.shape));
  if (bias.dim() != 1 || bias.size(0) != a.size(1) || !bias.is_contiguous())
    throw Error("add: bias must be a contiguous vector of " + std::to_string(a.size(1)) + " elements, got " +
                ladder::shape_str(bias.shape));
  if (a.dtype != bias.dtype || a.dtype != out.dtype) throw Error("add: a, bias and out must share a dtype");
  ladder::require_no_partial_overlap("add", "a", out, a);
  ladder::require_no_partial_overlap("add", "bias", out, bias);
  ladder::find_variant(add_variants(), variant, "add")
      .launch(a.data, bias.data, out.data, a.size(0), a.size(1), a.dtype, ladder::current_stream());
}

}  // namespace ch01
