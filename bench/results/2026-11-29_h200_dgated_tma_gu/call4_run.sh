#!/usr/bin/env bash
# Experiment: the new dgated_gemm (working tree) against the old one (.exp/dgated_gemm_old.cu), one call, one GPU.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake --preset default > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
cmake --build build --target 06_train_mlp 06_train_mlp_gpu_tests bench_train_mlp -j16 > $OUT/build.log 2>&1 || { grep -m5 error $OUT/build.log; exit 1; }
mkdir -p old && cp -r $(ls -A | grep -v '^old$\|^build') old/ 2>/dev/null; cp .exp/dgated_gemm_kept.cu old/06_train_mlp/dgated_gemm.cu
(cd old && cmake --preset default > /dev/null 2>&1 && cmake --build build --target bench_train_mlp -j16 > $OUT/build_old.log 2>&1) || { grep -m5 error $OUT/build_old.log; exit 1; }
export LADDER_REQUIRE_GPU=1
build/chapters/06_train_mlp/06_train_mlp_gpu_tests --gtest_filter='Dgated*' 2>&1 | tail -4
for m in eager fused epilogue recompute; do echo "$m: $(build/06_train_mlp --batch 64 --seq 128 --dim 768 --hidden 3072 --mode $m --check-only | grep checksum)"; done
for a in "--batch 3 --seq 5 --dim 64 --hidden 200" "--batch 1 --seq 300 --dim 72 --hidden 136" "--batch 5 --seq 333 --dim 200 --hidden 264"; do echo "$a: $(build/06_train_mlp $a --mode eager --check-only | grep checksum) / $(build/06_train_mlp $a --mode epilogue --check-only | grep checksum)"; done
compute-sanitizer --tool racecheck --print-limit 5 build/06_train_mlp --batch 3 --seq 50 --dim 64 --hidden 200 --mode epilogue --check-only 2>&1 | tail -2
compute-sanitizer --tool synccheck --print-limit 5 build/06_train_mlp --batch 3 --seq 50 --dim 64 --hidden 200 --mode epilogue --check-only 2>&1 | tail -2
compute-sanitizer --tool memcheck --print-limit 5 build/06_train_mlp --batch 3 --seq 50 --dim 64 --hidden 200 --mode epilogue --check-only 2>&1 | tail -2
echo "== new"; build/bench/bench_train_mlp --iters 50 2>&1 | tee $OUT/bench_new.txt | grep -v "^$"
echo "== old"; old/build/bench/bench_train_mlp --iters 50 2>&1 | tee $OUT/bench_old.txt | grep "dgated_gemm kernel\|floor"
