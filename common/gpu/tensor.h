// A tiny strided tensor view, enough to show what PyTorch's metadata ops do.
//
// A Tensor is a pointer plus dtype, shape and strides (in elements), sharing ownership of its device storage with
// every view made from it. `t()` and `reshape()` build new views over the same storage: they move no data and
// launch nothing, which is exactly why `aten::t` shows no kernel in a trace.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ladder {

enum class DType { F32, BF16 };

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);         // "float32", "bf16"
const char* dtype_torch_name(DType dtype);   // "float", "c10::BFloat16": what torch writes as "Input type"
DType parse_dtype(const std::string& name);  // "float32"|"fp32"|"f32" or "bf16"|"bfloat16"; throws UsageError

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& shape);  // "[1024, 32]"
Shape contiguous_strides(const Shape& shape);

struct Tensor {
  std::shared_ptr<void> storage;  // keeps the device allocation alive; null for a view over borrowed memory
  void* data = nullptr;           // first element
  DType dtype = DType::F32;
  Shape shape;
  Shape strides;

  int dim() const { return static_cast<int>(shape.size()); }
  int64_t size(int d) const { return shape.at(d < 0 ? d + dim() : d); }
  int64_t stride(int d) const { return strides.at(d < 0 ? d + dim() : d); }
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  bool is_contiguous() const;

  // Transpose of a 2-D tensor: shape and strides swapped, same data.
  Tensor t() const;
  // Same data seen with another shape (one dimension may be -1). Only for contiguous tensors, like torch's view().
  Tensor reshape(Shape new_shape) const;

  template <class T>
  T* ptr() const {
    return static_cast<T*>(data);
  }
};

// bf16 <-> float on the host, round-to-nearest-even like __float2bfloat16 (NaN stays NaN).
uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(uint16_t b);
float round_to(DType dtype, float f);  // the float nearest to what `dtype` can hold

// The check every elementwise op makes before launching a kernel that walks a flat array: `t` must have `dtype`, be
// contiguous and hold `numel` elements; otherwise a ladder::Error naming the op and the argument.
void require_flat(DType dtype, const char* op, const char* arg, const Tensor& t, int64_t numel);

// An output that is exactly an input (in place: same start, same size) is fine for the ladder's elementwise kernels:
// each element is read only by the thread that then writes it, and their pointers are not __restrict__ (which would
// promise the compiler that no output byte is also an input byte). One that overlaps an input only in part is not:
// threads would read elements other threads write, in no set order. This throws a ladder::Error naming the op and the
// argument for that, like PyTorch's assert_no_partial_overlap.
void require_no_partial_overlap(const char* op, const char* arg, const Tensor& out, const Tensor& in);

// A view over memory someone else owns.
Tensor view_of(void* data, DType dtype, Shape shape);

}  // namespace ladder
