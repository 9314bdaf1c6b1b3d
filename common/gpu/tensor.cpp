#include "gpu/tensor.h"

#include <cmath>
#include <cstring>
#include <numeric>

#include "base/error.h"

namespace ladder {

size_t dtype_size(DType dtype) { return dtype == DType::F32 ? 4 : 2; }
const char* dtype_name(DType dtype) { return dtype == DType::F32 ? "float32" : "bf16"; }
const char* dtype_torch_name(DType dtype) { return dtype == DType::F32 ? "float" : "c10::BFloat16"; }

DType parse_dtype(const std::string& name) {
  if (name == "float32" || name == "fp32" || name == "f32" || name == "float") return DType::F32;
  if (name == "bf16" || name == "bfloat16") return DType::BF16;
  throw UsageError("--dtype: unknown dtype '" + name + "' (use float32 or bf16)");
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

int64_t Tensor::numel() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

bool Tensor::is_contiguous() const {
  const Shape expected = contiguous_strides(shape);
  for (int d = 0; d < dim(); ++d) {
    if (shape[d] != 1 && strides[d] != expected[d]) return false;  // size-1 dims may carry any stride
  }
  return true;
}

Tensor Tensor::t() const {
  if (dim() != 2) throw Error("t() expects a 2-D tensor, got " + shape_str(shape));
  Tensor out = *this;
  std::swap(out.shape[0], out.shape[1]);
  std::swap(out.strides[0], out.strides[1]);
  return out;
}

Tensor Tensor::reshape(Shape new_shape) const {
  int infer = -1;
  int64_t known = 1;
  for (int d = 0; d < static_cast<int>(new_shape.size()); ++d) {
    if (new_shape[d] == -1) {
      if (infer >= 0) throw Error("reshape: only one dimension can be -1, got " + shape_str(new_shape));
      infer = d;
    } else if (new_shape[d] < 0) {
      throw Error("reshape: negative size in " + shape_str(new_shape));
    } else {
      known *= new_shape[d];
    }
  }
  if (infer >= 0) new_shape[infer] = known == 0 ? 0 : numel() / known;
  Tensor out = *this;
  out.shape = new_shape;
  if (out.numel() != numel()) throw Error("reshape: cannot view " + shape_str(shape) + " as " + shape_str(new_shape));
  if (!is_contiguous())
    throw Error("reshape: " + shape_str(shape) + " is not contiguous; this ladder only reshapes without copying");
  out.strides = contiguous_strides(new_shape);
  return out;
}

uint16_t float_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x0040);  // keep it a (quiet) NaN
  // Round to nearest, ties to even: add 0x7FFF plus the lowest kept bit, then drop the low 16 bits.
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float bf16_bits_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float round_to(DType dtype, float f) { return dtype == DType::F32 ? f : bf16_bits_to_float(float_to_bf16_bits(f)); }

void require_flat(DType dtype, const char* op, const char* arg, const Tensor& t, int64_t numel) {
  const std::string where = std::string(op) + ": " + arg;
  if (t.dtype != dtype) throw Error(where + " must be " + dtype_name(dtype) + ", got " + dtype_name(t.dtype));
  if (!t.is_contiguous())
    throw Error(where + " must be contiguous, got shape " + shape_str(t.shape) + " with strides " +
                shape_str(t.strides));
  if (t.numel() != numel)
    throw Error(where + " has " + std::to_string(t.numel()) + " elements " + shape_str(t.shape) + ", expected " +
                std::to_string(numel));
}

void require_no_partial_overlap(const char* op, const char* arg, const Tensor& out, const Tensor& in) {
  const auto a = reinterpret_cast<uintptr_t>(out.data), b = reinterpret_cast<uintptr_t>(in.data);
  const size_t na = out.nbytes(), nb = in.nbytes();
  if (na == 0 || nb == 0 || a + na <= b || b + nb <= a) return;  // disjoint
  if (a == b && na == nb) return;                                // in place
  throw Error(std::string(op) + ": the output overlaps " + arg +
              " in part; an output must be the input itself (in place) or share no memory with it");
}

Tensor view_of(void* data, DType dtype, Shape shape) {
  Tensor t;
  t.data = data;
  t.dtype = dtype;
  t.strides = contiguous_strides(shape);
  t.shape = std::move(shape);
  return t;
}

}  // namespace ladder
