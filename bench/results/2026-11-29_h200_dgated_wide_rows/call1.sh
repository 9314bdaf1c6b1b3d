#!/usr/bin/env bash
# The wide backward GEMM (128 x 256 tiles, three epilogue warps) with more of g and u in flight an epilogue thread: batches
# of 6 (as committed, but rows stepped as the narrow kernel steps them), 8, 11, 12 vectors, and two batches of 5 or 6
# in flight (the next batch loaded before this one is worked on). All in one bench_train_mlp beside the committed ones.
set -uo pipefail
export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
cp .exp/s11/wide_exp.cu 06_train_mlp/wide_exp.cu
files=""; decl=""; list=""
while read -r name batch pipe; do
  printf '#define DG_BATCH %s\n#define DG_PIPE %s\n#define DG_LAUNCHER launch_wide_%s\n#include "06_train_mlp/wide_exp.cu"\n' $batch $pipe $name > 06_train_mlp/wv_$name.cu
  files="$files wv_$name.cu"; decl="$decl, launch_wide_$name"
  list="$list {\"    (c) wide $name\", ch06::launch_wide_$name},"
done < .exp/s11/variants.txt
sed -i "s/SM90A_KERNELS dgated_gemm.cu dgated_gemm_wide.cu geglu_gemm_keep.cu/SM90A_KERNELS dgated_gemm.cu dgated_gemm_wide.cu geglu_gemm_keep.cu$files/" 06_train_mlp/CMakeLists.txt
sed -i "s/DgatedGemmLauncher launch_dgated_gemm, launch_dgated_gemm_narrow, launch_dgated_gemm_wide;/DgatedGemmLauncher launch_dgated_gemm, launch_dgated_gemm_narrow, launch_dgated_gemm_wide$decl;/" 06_train_mlp/dgated_gemm.h
sed -i "s|{\"    (c) wide, 128 x 256 tiles\", ch06::launch_dgated_gemm_wide}};|{\"    (c) wide, 128 x 256 tiles\", ch06::launch_dgated_gemm_wide},$list};|" bench/train_mlp.cpp
grep -n "launch_wide" bench/train_mlp.cpp 06_train_mlp/dgated_gemm.h | cut -c1-200 | head -3
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build /tmp/b --target bench_train_mlp -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
for r in 1 2; do
  timeout 150 /tmp/b/bench/bench_train_mlp --iters 50 > $OUT/bench_$r.txt 2>&1; echo "rc=$?"
  grep -E "\(a\) cublas|\(b\)|\(c\)|floor|rror" $OUT/bench_$r.txt | cut -c1-120
  echo "($((SECONDS - t0)) s)"
done
