// For each GEMM of 06's training step (blog shape), every algorithm cuBLASLt's heuristic offers (up to 32), timed:
// median of 30 runs after 5 warm-ups, L2 not flushed (as in the step). Prints heuristic #0's time and the best.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { auto e = (x); if (e != 0) { printf("error %d at %s:%d\n", int(e), __FILE__, __LINE__); exit(1); } } while (0)

struct Shape { const char* name; cublasOperation_t ta, tb; int m, n, k, lda, ldb, ldc; };

int main(int argc, char** argv) {
  // With two arguments, SHAPE ALGO: run that one algorithm of that GEMM once (for a profiler to name its kernel).
  const int only_shape = argc > 2 ? atoi(argv[1]) : -1, only_algo = argc > 2 ? atoi(argv[2]) : -1;
  int shape_index = -1;
  // cuBLAS column-major: D[m x n] = op(A) op(B); our row-major out[M, N] = a @ b is out^T = b^T a^T (m = N, n = M).
  const Shape shapes[] = {
      {"B down fwd  y = m @ W_down^T   ", CUBLAS_OP_T, CUBLAS_OP_N, 768, 8192, 3072, 3072, 3072, 768},
      {"D dW_down = dy^T @ m          ", CUBLAS_OP_N, CUBLAS_OP_T, 3072, 768, 8192, 3072, 768, 3072},
      {"E dx = [dg|du] @ [Wg;Wu]      ", CUBLAS_OP_N, CUBLAS_OP_N, 768, 8192, 6144, 768, 6144, 768},
      {"F dW_gu = [dg|du]^T @ x       ", CUBLAS_OP_N, CUBLAS_OP_T, 768, 6144, 8192, 768, 6144, 768},
      {"G [g|u] = x @ [Wg;Wu]^T       ", CUBLAS_OP_T, CUBLAS_OP_N, 6144, 8192, 768, 768, 768, 6144},
  };
  cublasLtHandle_t h;
  CK(cublasLtCreate(&h));
  size_t ws_bytes = 32 << 20;
  void* ws;
  CK(cudaMalloc(&ws, ws_bytes));
  void *A, *B, *C;
  CK(cudaMalloc(&A, size_t(64) << 20 << 1));
  CK(cudaMalloc(&B, size_t(64) << 20 << 1));
  CK(cudaMalloc(&C, size_t(64) << 20 << 1));
  CK(cudaMemset(A, 0x3c, size_t(64) << 20 << 1));
  CK(cudaMemset(B, 0x3c, size_t(64) << 20 << 1));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (const Shape& s : shapes) {
    ++shape_index;
    if (only_shape >= 0 && shape_index != only_shape) continue;
    cublasLtMatmulDesc_t desc;
    CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &s.ta, sizeof(s.ta)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &s.tb, sizeof(s.tb)));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, s.ta == CUBLAS_OP_N ? s.m : s.k, s.ta == CUBLAS_OP_N ? s.k : s.m, s.lda));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, s.tb == CUBLAS_OP_N ? s.k : s.n, s.tb == CUBLAS_OP_N ? s.n : s.k, s.ldb));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, s.m, s.n, s.ldc));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes)));
    cublasLtMatmulHeuristicResult_t res[32];
    int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, lc, lc, pref, 32, res, &found));
    const float alpha = 1, beta = 0;
    if (only_algo >= 0) {
      if (only_algo < found)
        CK(cublasLtMatmul(h, desc, &alpha, A, la, B, lb, &beta, C, lc, C, lc, &res[only_algo].algo, ws, ws_bytes, 0));
      CK(cudaDeviceSynchronize());
      continue;
    }
    double t0 = 0, best = 1e9;
    int best_i = -1;
    std::vector<float> all;
    for (int i = 0; i < found; ++i) {
      std::vector<float> ts;
      bool ok = true;
      for (int r = 0; r < 35 && ok; ++r) {
        cudaEventRecord(e0);
        ok = cublasLtMatmul(h, desc, &alpha, A, la, B, lb, &beta, C, lc, C, lc, &res[i].algo, ws, ws_bytes, 0) ==
             CUBLAS_STATUS_SUCCESS;
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r >= 5) ts.push_back(ms * 1000);
      }
      if (!ok) { all.push_back(-1); continue; }
      std::sort(ts.begin(), ts.end());
      const double med = ts[ts.size() / 2];
      all.push_back(med);
      if (i == 0) t0 = med;
      if (med < best) best = med, best_i = i;
    }
    printf("%s found %2d  #0 %7.1f us  best #%d %7.1f us  (%.1f us less)  all:", s.name, found, t0, best_i, best,
           t0 - best);
    for (float v : all) printf(" %.1f", v);
    printf("\n");
  }
  return 0;
}
