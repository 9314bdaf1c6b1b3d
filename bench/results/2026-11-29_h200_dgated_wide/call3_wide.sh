#!/usr/bin/env bash
# dgated_gemm with 128 x 256 tiles (m64n256k16), three ring stages, one 64 KB dh buffer, three epilogue warps loading g
# and u themselves; against the kept kernel in the same call.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/machine.txt
rm -rf /tmp/w && mkdir /tmp/w && cp -r $(ls -A | grep -v '^build') /tmp/w/ && cp .exp/wide/dgated_gemm.cu /tmp/w/06_train_mlp/dgated_gemm.cu
bench_build() {  # DIR NAME FLAGS
  cmake -S $1 -B /tmp/b-$2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DCMAKE_CUDA_ARCHITECTURES=90 "-DCMAKE_CUDA_FLAGS=$3" > $OUT/cfg-$2.log 2>&1 && cmake --build /tmp/b-$2 --target bench_train_mlp -j6 > $OUT/build-$2.log 2>&1 || { echo "build $2 failed"; grep -m8 -A3 error $OUT/build-$2.log; }
}
t0=$SECONDS
( cd /tmp/w && cmake --preset default > $OUT/cfg-full.log 2>&1 && cmake --build build -j8 > $OUT/build-full.log 2>&1 || { echo "full build failed"; grep -m10 -A3 -E "error|FAILED" $OUT/build-full.log; } ) &
bench_build . kept "" &
bench_build /tmp/w w4 "-DDG_BATCH=4" &
bench_build /tmp/w w6 "-DDG_BATCH=6" &
bench_build /tmp/w w4g16 "-DDG_BATCH=4 -DDG_GROUPM=16" &
wait; echo "built ($((SECONDS - t0)) s)"
( cd /tmp/w && LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -R "Dgated|06_" -j4 --output-on-failure > $OUT/ctest_wide.log 2>&1; grep -E "tests passed|Failed|Not Run" $OUT/ctest_wide.log | head )
for v in kept w4 w6 w4g16 kept w4; do
  echo "== $v"; /tmp/b-$v/bench/bench_train_mlp --iters 50 > $OUT/bench-$v.txt 2>&1; grep -E "\(a\) cublas|\(b\)|dgated_gemm kernel|floor|rror" $OUT/bench-$v.txt
done
echo "($((SECONDS - t0)) s)"
