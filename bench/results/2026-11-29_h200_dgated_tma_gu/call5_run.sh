#!/usr/bin/env bash
# Experiment: two dh buffers and two g/u slots (the ring keeps four stages) against the kept kernel, one call.
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
build_variant() {  # NAME FLAGS
  cmake -S . -B build-$1 -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
    "-DCMAKE_CUDA_FLAGS=$2" > $OUT/cfg-$1.log 2>&1 && cmake --build build-$1 --target bench_train_mlp 06_train_mlp -j8 > $OUT/build-$1.log 2>&1 || { echo "build $1 failed"; grep -m5 error $OUT/build-$1.log; }
}
build_variant b1s4 "" &
build_variant b2s2 "-DDG_BUFS=2 -DDG_SLOTS=2" &
wait
for a in "--batch 3 --seq 5 --dim 64 --hidden 200" "--batch 5 --seq 333 --dim 200 --hidden 264" "--batch 64 --seq 128 --dim 768 --hidden 3072"; do
  echo "$a: eager $(build-b2s2/06_train_mlp $a --mode eager --check-only | grep checksum) / b2s2 epilogue $(build-b2s2/06_train_mlp $a --mode epilogue --check-only | grep checksum)"
done
compute-sanitizer --tool racecheck --print-limit 5 build-b2s2/06_train_mlp --batch 3 --seq 50 --dim 64 --hidden 200 --mode epilogue --check-only 2>&1 | tail -1
compute-sanitizer --tool synccheck --print-limit 5 build-b2s2/06_train_mlp --batch 3 --seq 50 --dim 64 --hidden 200 --mode epilogue --check-only 2>&1 | tail -1
for r in 1 2; do for v in b1s4 b2s2; do
  echo "== $v ($r)"; build-$v/bench/bench_train_mlp --iters 50 2>&1 | tee $OUT/bench-$v-$r.txt | grep "dgated_gemm kernel\|floor"
done; done
