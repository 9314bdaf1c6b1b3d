// Experiment harness: 06's training forward (the committed kernel and keep_exp's variants) beside cuBLASLt's
// [g | u] = x @ [W_gate; W_up]^T (heuristic algorithms 0 and 3), same inputs, random bf16; bits of the variants that
// write everything against the committed kernel; then rounds of timing, the variants in turn (mean of 20 launches
// after 3, L2 not flushed, as in the step).
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "06_train_mlp/dgated_gemm.h"

namespace ch06exp {
void launch_keep_exp(int variant, const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                     __nv_bfloat16* h, __nv_bfloat16* g, __nv_bfloat16* u, int64_t M, int64_t dim, int64_t hidden,
                     cudaStream_t stream);
int gelu_fold_mismatches(unsigned* first_input);
}

#define CK(x) do { auto e_ = (x); if (e_ != 0) { std::printf("error %d at line %d\n", int(e_), __LINE__); std::exit(1); } } while (0)
using bf16 = __nv_bfloat16;

static std::vector<bf16> random_bf16(size_t n, uint64_t seed, float scale) {
  std::vector<bf16> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = __float2bfloat16(scale * ((static_cast<float>(seed >> 40) / 16777216.f) * 2.f - 1.f));
  }
  return v;
}

struct Bufs {
  bf16 *x, *w, *h, *g, *u, *c;
};

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const char* variants_env = std::getenv("VARIANTS");
  std::vector<int> variants;
  for (const char* p = variants_env ? variants_env : "0,10,14,15,11,9"; *p;) {
    variants.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p) ++p;
  }
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  unsigned first = 0;
  const int mism = ch06exp::gelu_fold_mismatches(&first);
  std::printf("folded GELU: %d of 65536 bf16 inputs round to other bf16 bits (first input 0x%04x)\n", mism, first);
  // Bits: the variants that write h, g and u (0 and 4) against the committed kernel, at several shapes.
  const int64_t shapes[][3] = {{8192, 768, 3072}, {2107, 768, 3072}, {37, 24, 80}, {300, 136, 520}, {128, 64, 128}};
  for (const auto& s : shapes) {
    const int64_t M = s[0], dim = s[1], hidden = s[2];
    const size_t nx = M * dim, nw = 2 * hidden * dim, no = M * hidden;
    bf16 *x, *w, *o[6];
    CK(cudaMalloc(&x, nx * 2));
    CK(cudaMalloc(&w, nw * 2));
    for (auto& p : o) CK(cudaMalloc(&p, no * 2 + 64));
    auto hx = random_bf16(nx, 1 + M, 1.f), hw = random_bf16(nw, 2 + hidden, 0.06f);
    CK(cudaMemcpy(x, hx.data(), nx * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w, hw.data(), nw * 2, cudaMemcpyHostToDevice));
    for (int v : {0, 10, 14}) {
      for (auto& p : o) CK(cudaMemset(p, 0xff, no * 2 + 64));
      ch06::launch_geglu_gemm_keep(x, w, w + hidden * dim, o[0], o[1], o[2], M, dim, hidden, 0);
      ch06exp::launch_keep_exp(v, x, w, w + hidden * dim, o[3], o[4], o[5], M, dim, hidden, 0);
      CK(cudaDeviceSynchronize());
      std::vector<uint16_t> a(no + 32), b(no + 32);
      size_t diff[3] = {0, 0, 0}, nan = 0;
      for (int k = 0; k < 3; ++k) {
        CK(cudaMemcpy(a.data(), o[k], no * 2 + 64, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), o[3 + k], no * 2 + 64, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < no + 32; ++i) {
          diff[k] += a[i] != b[i];
          if (i < no) nan += (b[i] & 0x7f80) == 0x7f80;
        }
      }
      std::printf("bits variant %d M=%ld dim=%ld hidden=%ld: differ h %zu g %zu u %zu of %zu, NaN/Inf %zu\n", v, M, dim,
                  hidden, diff[0], diff[1], diff[2], no, nan);
    }
    cudaFree(x);
    cudaFree(w);
    for (auto& p : o) cudaFree(p);
  }

  // Timing at the blog's shape.
  const int64_t M = 8192, dim = 768, hidden = 3072;
  Bufs b;
  CK(cudaMalloc(&b.x, M * dim * 2));
  CK(cudaMalloc(&b.w, 2 * hidden * dim * 2));
  CK(cudaMalloc(&b.h, M * hidden * 2));
  CK(cudaMalloc(&b.g, M * hidden * 2));
  CK(cudaMalloc(&b.u, M * hidden * 2));
  CK(cudaMalloc(&b.c, M * 2 * hidden * 2));
  auto hx = random_bf16(M * dim, 11, 1.f), hw = random_bf16(2 * hidden * dim, 12, 0.06f);
  CK(cudaMemcpy(b.x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.w, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));

  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  size_t ws_bytes = 32 << 20;
  void* ws;
  CK(cudaMalloc(&ws, ws_bytes));
  // column-major: C^T [2h x M] = W_gu [2h x dim] (T of dim x 2h) * x^T [dim x M]
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDesc_t desc;
  CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  cublasLtMatrixLayout_t la, lb, lc;
  CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, dim, 2 * hidden, dim));
  CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, dim, M, dim));
  CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, 2 * hidden, M, 2 * hidden));
  cublasLtMatmulPreference_t pref;
  CK(cublasLtMatmulPreferenceCreate(&pref));
  CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes)));
  cublasLtMatmulHeuristicResult_t res[8];
  int found = 0;
  CK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 8, res, &found));
  const float alpha = 1, beta = 0;

  auto launch = [&](int v) {
    if (v == 100 || v == 103) {
      const int i = v - 100 < found ? v - 100 : 0;
      CK(cublasLtMatmul(lt, desc, &alpha, b.w, la, b.x, lb, &beta, b.c, lc, b.c, lc, &res[i].algo, ws, ws_bytes, 0));
    } else if (v == 99) {
      ch06::launch_geglu_gemm_keep(b.x, b.w, b.w + hidden * dim, b.h, b.g, b.u, M, dim, hidden, 0);
    } else {
      ch06exp::launch_keep_exp(v, b.x, b.w, b.w + hidden * dim, b.h, b.g, b.u, M, dim, hidden, 0);
    }
  };
  const auto name_of = [](int v) {
    return v == 99 ? std::string("committed") : v == 100 ? std::string("cublasLt algo 0") : v == 103 ? std::string("cublasLt algo 3") : "variant " + std::to_string(v);
  };
  std::vector<int> all = {99, 100, 103};
  all.insert(all.end(), variants.begin(), variants.end());
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<std::vector<float>> times(all.size());
  for (int r = 1; r <= rounds; ++r)
    for (size_t k = 0; k < all.size(); ++k) {
      const int v = all[k];
      for (int i = 0; i < 2; ++i) launch(v);
      CK(cudaEventRecord(e0));
      for (int i = 0; i < 10; ++i) launch(v);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      times[k].push_back(ms * 100);
      std::printf("round %d %-16s %8.2f us\n", r, name_of(v).c_str(), ms * 100);
    }
  for (size_t k = 0; k < all.size(); ++k) {
    std::vector<float> t = times[k];
    std::sort(t.begin(), t.end());
    std::printf("median of %zu rounds: %-16s %8.2f us  (min %.2f, max %.2f)\n", t.size(), name_of(all[k]).c_str(),
                t[t.size() / 2], t.front(), t.back());
  }
  return 0;
}
