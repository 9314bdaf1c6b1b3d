#!/usr/bin/env bash
# bf16x2 epilogue arithmetic (all kernels) + overlap; then overlap with the consumers' chunks staggered.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
t0=$SECONDS
rm -rf build
cmake --preset default > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
timeout 200 build/bench/bench_train_mlp --iters 30 > $OUT/bench_v0.txt 2>&1; echo "rc $?"; grep -E "\(c\)|floor" $OUT/bench_v0.txt
cp .exp/ov/v1_stagger.cu 06_train_mlp/dgated_gemm_overlap.cu
cmake --build build -j16 --target bench_train_mlp > $OUT/build1.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build1.log; exit 1; }
timeout 200 build/bench/bench_train_mlp --iters 30 > $OUT/bench_v1.txt 2>&1; echo "rc $?"; grep -E "\(c\)|floor" $OUT/bench_v1.txt
echo "($((SECONDS - t0)) s)"
