// The ops layer: the C++ counterparts of the aten ops a PyTorch trace shows.
//
// Every op opens a CPU range (category cpu_op) named exactly like the aten op it reproduces ("aten::linear"), records
// its inputs' dims, dtypes and strides as the range's args (torch's record_shapes), and pushes the range's id as CUPTI's
// external correlation id, so the kernel it launches carries the op's "External id" in the trace. The same names make
// the tools that read PyTorch's traces (HolisticTraceAnalysis, TensorBoard's profiler) treat our ops as theirs.
//
// Outputs are passed in, already allocated: like PyTorch's caching allocator, a forward never calls cudaMalloc, so the
// trace shows only the work itself.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "gpu/tensor.h"
#include "profiler/profiler.h"

namespace ladder {

// The range every op opens: a cpu_op named like the aten op it reproduces ("aten::mm"), or "ladder::..." for an op
// aten has no counterpart for (03_fused_mlp's "ladder::gelu_mul"), with its inputs' dims, dtypes and strides as args
// (torch's record_shapes) while a profiler records. A chapter's own kernels open one too, so their kernels carry an
// op's External id like every other (a null input stands for an argument that is not a tensor).
class OpRange {
 public:
  OpRange(const std::string& name, std::initializer_list<const Tensor*> inputs);

 private:
  Range range_;
};

}  // namespace ladder

namespace ladder::ops {

// t: a view with shape and strides swapped (2-D). Recorded as an op; launches nothing.
Tensor t(const Tensor& a);
// reshape: a view with another shape (contiguous input). Recorded as an op; launches nothing.
Tensor reshape(const Tensor& a, const Shape& shape);

// out[M,N] = a[M,K] @ b[K,N], on cuBLASLt. `a` and `b` may be row-major or transposed views (one stride 1), starting
// anywhere in their buffers; the transpose flags come from the strides. `out` must be contiguous. Like torch, M = 0 or
// N = 0 computes nothing and K = 0 writes zeros (addmm: the bias), without calling cuBLASLt. GEMMs run on
// current_stream() only (the default stream, or one capturing a graph): they share one workspace.
void mm(const Tensor& a, const Tensor& b, const Tensor& out);
// out[M,N] = a[M,K] @ b[K,N] + bias[N], with the bias add in the GEMM's epilogue (CUBLASLT_EPILOGUE_BIAS): one kernel.
void addmm(const Tensor& bias, const Tensor& a, const Tensor& b, const Tensor& out);
// matmul like aten::matmul: a[..., K] @ b[K, N]. A 2-D `a` goes straight to mm; a higher-dimensional one is reshaped
// to [rows, K] first (a view), multiplied, and `out` is written through the same kind of view.
void matmul(const Tensor& a, const Tensor& b, const Tensor& out);
// linear like aten::linear: x[..., in] @ w[out, in]^T (+ bias[out]). w.t() is a view; with a bias it is one addmm
// (bias in the epilogue), without one it is matmul.
void linear(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& out);

// How a row-major-minded op hands a 2-D view to column-major cuBLAS. A row-major [r, c] view (stride 1 along c) is a
// column-major [c, r] matrix with leading dimension stride(0), op N; a transposed view (stride 1 along r) is op T.
struct GemmOperand {
  bool transposed = false;  // cuBLAS op T
  int64_t ld = 0;           // leading dimension in elements
};
// Chooses the flags for a 2-D view; throws ladder::Error if neither stride is 1 (torch would copy; we refuse).
GemmOperand gemm_operand(const Tensor& a);

// The largest power of two dividing the address, at most 256: what cuBLASLt is told about each operand's alignment.
uint32_t pointer_alignment(const void* p);
// The error when cuBLASLt has no kernel for out = a @ b: the shapes, the flags, and what about the operands' rows or
// addresses rules its kernels out.
std::string no_kernel_message(const char* op, const Tensor& a, const Tensor& b, const Tensor& out);

// The flags cuBLAS gets for out = a @ b with row-major output, in cuBLAS's order (the weight-like operand first).
// For linear's a = x, b = w.t() this is "TN": the letters that show up in the GEMM kernel's name.
std::string gemm_flags(const Tensor& a, const Tensor& b);

}  // namespace ladder::ops
