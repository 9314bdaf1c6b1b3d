#!/usr/bin/env bash
# Compiles dgated_gemm.cu's kernel as a 768-thread block (six warpgroups: room for four math warpgroups of 64
# accumulators each beside seven epilogue warps and the producer), only to see whether ptxas can fit it; run from the
# repository root, no GPU needed. Writes compile_768_ptxas.txt.
set -uo pipefail
sed 's/constexpr int kThreads = 4 \* kWarpgroup; /constexpr int kThreads = 6 * kWarpgroup; /' 06_train_mlp/dgated_gemm.cu \
  > 06_train_mlp/zz_768.cu
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. -Icommon -c 06_train_mlp/zz_768.cu -o /tmp/zz_768.o \
  -Xptxas -v 2>&1 | sed 's/_ZN4ch06[A-Za-z0-9_]*/dgated_gemm_kernel/' > bench/results/2026-11-29_h200_dgated_wide_rows/compile_768_ptxas.txt
rm -f 06_train_mlp/zz_768.cu
