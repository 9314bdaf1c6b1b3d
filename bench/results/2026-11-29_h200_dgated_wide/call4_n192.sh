#!/usr/bin/env bash
# dgated_gemm with 128 x 192 tiles (m64n192k16, 96 accumulators: fits 512 threads), four ring stages, one 48 KB dh
# buffer, seven epilogue warps loading g and u themselves; against the kept kernel in the same call.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/machine.txt
rm -rf /tmp/w && mkdir /tmp/w && cp -r $(ls -A | grep -v '^build') /tmp/w/ && cp .exp/n192/dgated_gemm.cu /tmp/w/06_train_mlp/ && cp .exp/n192/ptx.cuh .exp/n192/pipeline.cuh /tmp/w/common/hopper/
bench_build() {  # DIR NAME FLAGS
  cmake -S $1 -B /tmp/b-$2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DCMAKE_CUDA_ARCHITECTURES=90 "-DCMAKE_CUDA_FLAGS=$3" > $OUT/cfg-$2.log 2>&1 && cmake --build /tmp/b-$2 --target bench_train_mlp -j6 > $OUT/build-$2.log 2>&1 || { echo "build $2 failed"; grep -m8 -A3 error $OUT/build-$2.log; }
}
t0=$SECONDS
( cd /tmp/w && cmake --preset default > $OUT/cfg-full.log 2>&1 && cmake --build build -j8 > $OUT/build-full.log 2>&1 || { echo "full build failed"; grep -m10 -A3 -E "error|FAILED" $OUT/build-full.log; } ) &
bench_build . kept "" &
bench_build /tmp/w n5 "-DDG_BATCH=5" &
bench_build /tmp/w n4 "-DDG_BATCH=4" &
bench_build /tmp/w n5g16 "-DDG_BATCH=5 -DDG_GROUPM=16" &
wait; echo "built ($((SECONDS - t0)) s)"
( cd /tmp/w && LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -R "Dgated|06_" -j4 --output-on-failure > $OUT/ctest.log 2>&1; grep -E "tests passed|Failed|Not Run" $OUT/ctest.log | head )
for v in kept n5 n4 n5g16 kept n5; do
  echo "== $v"; /tmp/b-$v/bench/bench_train_mlp --iters 50 > $OUT/bench-$v.txt 2>&1; grep -E "dgated_gemm kernel|floor|rror" $OUT/bench-$v.txt
done
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
echo "($((SECONDS - t0)) s)"
