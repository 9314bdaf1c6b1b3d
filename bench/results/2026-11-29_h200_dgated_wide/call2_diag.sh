#!/usr/bin/env bash
set -uo pipefail
rm -rf /tmp/tl && mkdir /tmp/tl && cp -r $(ls -A | grep -v '^build') /tmp/tl/; cp .exp/diag/dgated_gemm_tl.cu /tmp/tl/06_train_mlp/dgated_gemm.cu
cmake -S /tmp/tl -B /tmp/tl/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/cfg.log 2>&1 && cmake --build /tmp/tl/b --target bench_train_mlp -j16 > $OUT/build.log 2>&1 || { grep -m8 -A3 error $OUT/build.log; exit 1; }
/tmp/tl/b/bench/bench_train_mlp --iters 10 > $OUT/tl2_bench.txt 2>&1
for s in "M=8192 hidden=3072" "M=16384 hidden=3072" "M=8192 hidden=11008"; do grep "TL $s" $OUT/tl2_bench.txt | tail -2; done
