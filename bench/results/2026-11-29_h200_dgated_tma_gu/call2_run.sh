#!/usr/bin/env bash
# Experiment: epilogue variants of the TMA-fed dgated_gemm, side by side in one call.
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
build_variant() {  # NAME FLAGS
  cmake -S . -B build-$1 -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
    "-DCMAKE_CUDA_FLAGS=$2" > $OUT/cfg-$1.log 2>&1 && cmake --build build-$1 --target bench_train_mlp 06_train_mlp -j16 > $OUT/build-$1.log 2>&1 || { echo "build $1 failed"; grep -m5 error $OUT/build-$1.log; }
}
build_variant a "-DDGATED_EPILOGUE_WARPS=7" &
build_variant b "-DDGATED_EPILOGUE_WARPS=7 -DDGATED_UNROLL=2" &
build_variant c "-DDGATED_EPILOGUE_WARPS=11" &
wait
for v in a b c; do
  echo "== $v: $(build-$v/06_train_mlp --batch 64 --seq 128 --dim 768 --hidden 3072 --mode epilogue --check-only | grep checksum)"
  build-$v/bench/bench_train_mlp --iters 50 2>&1 | grep "dgated_gemm kernel\|floor\|(b)"
done
