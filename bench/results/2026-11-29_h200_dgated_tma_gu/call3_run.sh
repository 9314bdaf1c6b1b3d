#!/usr/bin/env bash
# Experiment: where dgated_gemm's time goes (epilogue with no math / no stores / nothing) and two candidate changes.
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
sed -i 's/if (b.max_ulps > kWrongUlps)/if (false \&\& b.max_ulps > kWrongUlps)/' bench/train_mlp.cpp  # time wrong kernels too
build_variant() {  # NAME FLAGS
  cmake -S . -B build-$1 -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
    "-DCMAKE_CUDA_FLAGS=$2" > $OUT/cfg-$1.log 2>&1 && cmake --build build-$1 --target bench_train_mlp -j8 > $OUT/build-$1.log 2>&1 || { echo "build $1 failed"; grep -m5 error $OUT/build-$1.log; }
}
build_variant kept "" &
build_variant nomath "-DDG_MODE=1" &
build_variant nostore "-DDG_MODE=2" &
build_variant noepi "-DDG_MODE=3" &
build_variant s3b2 "-DDG_STAGES=3 -DDG_BUFS=2" &
build_variant g16 "-DDG_GROUPM=16" &
wait
for v in kept nomath nostore noepi s3b2 g16; do
  echo "== $v"
  build-$v/bench/bench_train_mlp --iters 50 2>&1 | tee $OUT/bench-$v.txt | grep "dgated_gemm kernel\|floor"
done
