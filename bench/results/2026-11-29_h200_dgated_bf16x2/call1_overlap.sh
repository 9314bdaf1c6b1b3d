#!/usr/bin/env bash
# dgated_gemm_overlap.cu: build bench_train_mlp, run it.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1
t0=$SECONDS
rm -rf build
cmake --preset default > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
grep -A2 "overlap_kernel" $OUT/build.log | grep -E "spill|Used" | head -3
echo "build ok ($((SECONDS - t0)) s)"
timeout 300 build/bench/bench_train_mlp --iters 30 > $OUT/bench1.txt 2>&1; echo "rc $?"; cat $OUT/bench1.txt
echo "($((SECONDS - t0)) s)"
