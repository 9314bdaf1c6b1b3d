#include "gpu/ops.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>

#include "gpu/check.h"
#include "gpu/device.h"
#include "profiler/profiler.h"

namespace ladder {

OpRange::OpRange(const std::string& name, std::initializer_list<const Tensor*> inputs) : range_(name, Cat::CpuOp) {
  if (!range_.recorded()) return;  // nothing records: skip building the args
  std::vector<OpInput> args;
  for (const Tensor* t : inputs) args.push_back(t ? OpInput{t->shape, dtype_torch_name(t->dtype), t->strides} : OpInput{});
  range_.record_inputs(std::move(args));
}

}  // namespace ladder

namespace ladder::ops {

namespace {

// One cuBLASLt handle and one workspace for the whole program, made on first use (in the profiler's warmup step, so
// their cost never lands in the active steps). The workspace lets cuBLASLt pick kernels that need scratch memory.
struct Blas {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 32u << 20;
  Blas() {
    CUBLAS_CHECK(cublasLtCreate(&handle));
    CUDA_CHECK(cudaMalloc(&workspace, workspace_bytes));
  }
  ~Blas() {
    cudaFree(workspace);
    cublasLtDestroy(handle);
  }
};
Blas& blas() {
  static Blas b;
  return b;
}

cudaDataType_t cuda_type(DType d) { return d == DType::F32 ? CUDA_R_32F : CUDA_R_16BF; }

// RAII for cuBLASLt's descriptors so an error halfway never leaks them.
struct MatmulDesc {
  cublasLtMatmulDesc_t d = nullptr;
  MatmulDesc() { CUBLAS_CHECK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F)); }
  ~MatmulDesc() { cublasLtMatmulDescDestroy(d); }
  template <class T>
  void set(cublasLtMatmulDescAttributes_t attr, const T& value) {
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof(value)));
  }
};
struct Layout {
  cublasLtMatrixLayout_t d = nullptr;
  Layout(DType dtype, int64_t rows, int64_t cols, int64_t ld) {
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d, cuda_type(dtype), rows, cols, ld));
  }
  ~Layout() { cublasLtMatrixLayoutDestroy(d); }
};
struct Preference {
  cublasLtMatmulPreference_t d = nullptr;
  explicit Preference(size_t workspace) {
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&d));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                      sizeof(workspace)));
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(d); }
};

void check_2d(const Tensor& t, const char* what, const char* op) {
  if (t.dim() != 2) throw Error(fmt::format("{}: {} must be 2-D, got {}", op, what, shape_str(t.shape)));
}

// out[M,N] = a[M,K] @ b[K,N] (+ bias[N]) on cuBLASLt, no op range (mm and addmm open theirs).
//
// cuBLAS thinks in column-major. A row-major [M,N] matrix is, byte for byte, a column-major [N,M] matrix, so instead of
// out = a @ b we ask cuBLAS for out^T = b^T @ a^T: its "A" is our b and its "B" is our a. Whether each needs op T
// comes from its strides (gemm_operand), which is how a transposed view like w.t() costs no copy: cuBLAS just reads
// the same bytes in the other order, and picks a kernel built for that layout ("tn" in the name).
void gemm(const Tensor& a, const Tensor& b, const Tensor* bias, const Tensor& out, const char* op) {
  check_2d(a, "a", op);
  check_2d(b, "b", op);
  check_2d(out, "out", op);
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (b.size(0) != K || out.size(0) != M || out.size(1) != N)
    throw Error(fmt::format("{}: shapes do not fit: a {} @ b {} -> out {}", op, shape_str(a.shape), shape_str(b.shape),
                            shape_str(out.shape)));
  if (a.dtype != b.dtype || a.dtype != out.dtype) throw Error(fmt::format("{}: a, b and out must share a dtype", op));
  if (!out.is_contiguous()) throw Error(fmt::format("{}: out must be contiguous", op));
  if (bias) {
    if (bias->dim() != 1 || bias->size(0) != N || !bias->is_contiguous() || bias->dtype != out.dtype)
      throw Error(fmt::format("{}: bias must be a contiguous {} vector of {} elements, got {}", op,
                              dtype_name(out.dtype), N, shape_str(bias->shape)));
  }
  const GemmOperand opA = gemm_operand(b), opB = gemm_operand(a);

  MatmulDesc desc;
  const cublasOperation_t ta = opA.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = opB.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, ta);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, tb);
  if (bias) {
    // The epilogue: after the dot products, before the store, each output column of cuBLAS's D (one output feature)
    // gets bias[n] added. No second kernel, no second trip through HBM.
    desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    desc.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias->data);
    desc.set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, cuda_type(bias->dtype));
  }
  // Stored shapes (before op): an op-N operand of logical [rows, cols] is stored [rows, cols]; op-T stores [cols,
  // rows].
  Layout la(b.dtype, opA.transposed ? K : N, opA.transposed ? N : K, opA.ld);
  Layout lb(a.dtype, opB.transposed ? M : K, opB.transposed ? K : M, opB.ld);
  Layout lc(out.dtype, N, M, N);

  Blas& bl = blas();
  Preference pref(bl.workspace_bytes);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(bl.handle, desc.d, la.d, lb.d, lc.d, lc.d, pref.d, 1, &result, &found));
  if (found == 0)
    throw Error(
        fmt::format("{}: cuBLASLt has no kernel for {} a {} @ b {} (flags {}); for bf16 every row must start "
                    "on a 16-byte boundary, so K and N should be multiples of 8",
                    op, dtype_name(a.dtype), shape_str(a.shape), shape_str(b.shape), gemm_flags(a, b)));
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(bl.handle, desc.d, &alpha, b.data, la.d, a.data, lb.d, &beta, out.data, lc.d, out.data,
                              lc.d, &result.algo, bl.workspace, bl.workspace_bytes, current_stream()));
}

}  // namespace

GemmOperand gemm_operand(const Tensor& x) {
  if (x.dim() != 2) throw Error("gemm operand must be 2-D, got " + shape_str(x.shape));
  const int64_t r = x.size(0), c = x.size(1), s0 = x.stride(0), s1 = x.stride(1);
  // A size-1 dimension's stride is never used, so it does not decide the layout.
  const bool unit_col = s1 == 1 || c == 1;
  const bool unit_row = s0 == 1 || r == 1;
  if (unit_col && (r == 1 || s0 >= c)) return {false, r == 1 ? std::max<int64_t>(c, 1) : s0};
  if (unit_row && (c == 1 || s1 >= r)) return {true, c == 1 ? std::max<int64_t>(r, 1) : s1};
  throw Error(
      fmt::format("matrix of shape {} with strides {} has no unit stride; cuBLAS needs one dimension "
                  "contiguous (copy it first)",
                  shape_str(x.shape), shape_str(x.strides)));
}

std::string gemm_flags(const Tensor& a, const Tensor& b) {
  std::string s;
  s += gemm_operand(b).transposed ? 'T' : 'N';
  s += gemm_operand(a).transposed ? 'T' : 'N';
  return s;
}

Tensor t(const Tensor& a) {
  OpRange r("t", {&a});
  return a.t();
}

Tensor reshape(const Tensor& a, const Shape& shape) {
  OpRange r("reshape", {&a});
  return a.reshape(shape);
}

void mm(const Tensor& a, const Tensor& b, const Tensor& out) {
  OpRange r("mm", {&a, &b});
  gemm(a, b, nullptr, out, "mm");
}

void addmm(const Tensor& bias, const Tensor& a, const Tensor& b, const Tensor& out) {
  OpRange r("addmm", {&bias, &a, &b});
  gemm(a, b, &bias, out, "addmm");
}

void matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  OpRange r("matmul", {&a, &b});
  if (a.dim() == 2) return mm(a, b, out);
  // [..., K] @ [K, N]: fold the leading dims into rows. Both reshapes are views; only mm launches a kernel.
  const Tensor a2 = reshape(a, {-1, a.size(-1)});
  mm(a2, b, out.reshape({-1, out.size(-1)}));
}

void linear(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& out) {
  if (bias) {
    OpRange r("linear", {&x, &w, bias});
    const Tensor wt = t(w);  // [out, in] -> [in, out]: strides swap, nothing moves
    const Tensor x2 = x.dim() == 2 ? x : reshape(x, {-1, x.size(-1)});
    addmm(*bias, x2, wt, out.reshape({-1, out.size(-1)}));
  } else {
    OpRange r("linear", {&x, &w});
    matmul(x, t(w), out);
  }
}

}  // namespace ladder::ops
