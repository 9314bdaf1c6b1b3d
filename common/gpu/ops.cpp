#include "gpu/ops.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>

#include "cuda/check.h"
#include "gpu/stream.h"
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
// One workspace is enough only while no two GEMMs run at once: see require_one_stream below.
struct Blas {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 32u << 20;
  Blas() {
    // The first GEMM of a program may come while a CUDA graph captures the forward (01_matmul_add --graph without
    // --warmup), where cudaMalloc is refused in the default capture mode although it touches no stream. Relax the
    // mode for these one-time calls, as PyTorch's allocator does, and restore it.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    const cublasStatus_t created = cublasLtCreate(&handle);
    const cudaError_t allocated = cudaMalloc(&workspace, workspace_bytes);
    CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    CUBLAS_CHECK(created);
    CUDA_CHECK(allocated);
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
    set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace);
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(d); }
  template <class T>
  void set(cublasLtMatmulPreferenceAttributes_t attr, const T& value) {
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d, attr, &value, sizeof(value)));
  }
};

// The ladder runs every op on current_stream(): the legacy default stream, or a stream that is capturing a graph (which
// records work and runs none; the graph is then replayed on the default stream). So GEMMs never run at the same time,
// and the one workspace above is safe. Two streams running GEMMs at once would scribble over each other's scratch
// memory (PyTorch keeps a workspace per stream for that reason); rather than corrupt results silently, refuse.
void require_one_stream(cudaStream_t stream, const char* op) {
  if (stream == nullptr) return;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  if (status != cudaStreamCaptureStatusActive)
    throw Error(fmt::format("{}: GEMMs run on the default stream (or one capturing a graph) only, because they share "
                            "one cuBLASLt workspace; give each stream its own workspace before running them elsewhere",
                            op));
}

// For out = 0 or bias (K = 0: a sum of no terms): zeros, or the bias copied into row 0 and then doubled row block by
// row block (log2(M) copies).
void fill_without_gemm(const Tensor* bias, const Tensor& out, cudaStream_t stream) {
  if (!bias) {
    CUDA_CHECK(cudaMemsetAsync(out.data, 0, out.nbytes(), stream));
    return;
  }
  const int64_t M = out.size(0);
  const size_t row = out.nbytes() / M;
  char* p = static_cast<char*>(out.data);
  CUDA_CHECK(cudaMemcpyAsync(p, bias->data, row, cudaMemcpyDeviceToDevice, stream));
  for (int64_t done = 1; done < M; done *= 2)
    CUDA_CHECK(cudaMemcpyAsync(p + done * row, p, std::min(done, M - done) * row, cudaMemcpyDeviceToDevice, stream));
}

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
  // Empty dims, like torch: an [M, 0] or [0, N] output has nothing to compute; with K = 0 each output is a sum of no
  // terms, so 0 (+ bias). cuBLASLt is not asked about either.
  if (M == 0 || N == 0) return;
  if (K == 0) return fill_without_gemm(bias, out, current_stream());
  require_one_stream(current_stream(), op);
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
  if (const int32_t sms = gemm_sm_limit(); sms > 0) desc.set(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, sms);
  // Stored shapes (before op): an op-N operand of logical [rows, cols] is stored [rows, cols]; op-T stores [cols,
  // rows].
  Layout la(b.dtype, opA.transposed ? K : N, opA.transposed ? N : K, opA.ld);
  Layout lb(a.dtype, opB.transposed ? M : K, opB.transposed ? K : M, opB.ld);
  Layout lc(out.dtype, N, M, N);

  Blas& bl = blas();
  Preference pref(bl.workspace_bytes);
  // Tell cuBLASLt how aligned the pointers really are, as PyTorch does. Without this it assumes 256 bytes (what
  // cudaMalloc returns) and may pick a kernel whose 16-byte loads fault, or read the wrong bytes, on a view that
  // starts inside its buffer.
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, pointer_alignment(b.data));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, pointer_alignment(a.data));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, pointer_alignment(out.data));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, pointer_alignment(out.data));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(bl.handle, desc.d, la.d, lb.d, lc.d, lc.d, pref.d, 1, &result, &found));
  if (found == 0) throw Error(no_kernel_message(op, a, b, out));
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(bl.handle, desc.d, &alpha, b.data, la.d, a.data, lb.d, &beta, out.data, lc.d, out.data,
                              lc.d, &result.algo, bl.workspace, bl.workspace_bytes, current_stream()));
}

}  // namespace

uint32_t pointer_alignment(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 1;
  while (al < 256 && a % (2 * al) == 0) al *= 2;
  return al;
}

std::string no_kernel_message(const char* op, const Tensor& a, const Tensor& b, const Tensor& out) {
  // What cuBLASLt's kernels need that a view may not give: each operand's rows starting on 16-byte boundaries (its
  // leading dimension in bytes) and its first element at a 16-byte aligned address.
  std::string why;
  const size_t es = dtype_size(a.dtype);
  const auto look = [&](const char* name, const Tensor& t, int64_t ld) {
    if (ld * es % 16 != 0)
      why += fmt::format("; {}'s rows start every {} bytes, not on 16-byte boundaries (a {} row needs a multiple of {} "
                         "elements)",
                         name, ld * es, dtype_name(t.dtype), 16 / es);
    if (pointer_alignment(t.data) < 16)
      why += fmt::format("; {} starts at an address aligned to only {} bytes", name, pointer_alignment(t.data));
  };
  look("a", a, gemm_operand(a).ld);
  look("b", b, gemm_operand(b).ld);
  look("out", out, out.size(1));
  if (why.empty())
    why = "; its layout looks ordinary (16-byte rows and addresses), so this cuBLASLt has no kernel for it";
  return fmt::format("{}: cuBLASLt has no kernel for {} a {} @ b {} (flags {}){}", op, dtype_name(a.dtype),
                     shape_str(a.shape), shape_str(b.shape), gemm_flags(a, b), why);
}

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
  OpRange r("aten::t", {&a});
  return a.t();
}

Tensor reshape(const Tensor& a, const Shape& shape) {
  OpRange r("aten::reshape", {&a});
  return a.reshape(shape);
}

void mm(const Tensor& a, const Tensor& b, const Tensor& out) {
  OpRange r("aten::mm", {&a, &b});
  gemm(a, b, nullptr, out, "mm");
}

void addmm(const Tensor& bias, const Tensor& a, const Tensor& b, const Tensor& out) {
  OpRange r("aten::addmm", {&bias, &a, &b});
  gemm(a, b, &bias, out, "addmm");
}

void matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  OpRange r("aten::matmul", {&a, &b});
  if (a.dim() == 2) return mm(a, b, out);
  // [..., K] @ [K, N]: fold the leading dims into rows. Both reshapes are views; only mm launches a kernel.
  const Tensor a2 = reshape(a, {-1, a.size(-1)});
  mm(a2, b, out.reshape({-1, out.size(-1)}));
}

void linear(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& out) {
  if (bias) {
    OpRange r("aten::linear", {&x, &w, bias});
    const Tensor wt = t(w);  // [out, in] -> [in, out]: strides swap, nothing moves
    const Tensor x2 = x.dim() == 2 ? x : reshape(x, {-1, x.size(-1)});
    addmm(*bias, x2, wt, out.reshape({-1, out.size(-1)}));
  } else {
    OpRange r("aten::linear", {&x, &w});
    matmul(x, t(w), out);
  }
}

}  // namespace ladder::ops
