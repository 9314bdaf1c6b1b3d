#!/usr/bin/env bash
# W_down read MN-major (no transpose) against the committed tree: both built (bench_train_mlp, 06, 06's GPU tests),
# the DgatedGemm tests of the new tree, bench_train_mlp alternately, 06 --mode epilogue traces alternately.
set -uo pipefail
export CXX=/usr/bin/g++
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
t0=$SECONDS
tg="bench_train_mlp 06_train_mlp 06_train_mlp_gpu_tests ladder-trace"
( cmake -S .exp/base -B /tmp/base -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/base --target $tg -j8 > $OUT/build_base.log 2>&1 || echo "base build failed" ) &
cmake -S . -B /tmp/new -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/new --target $tg -j8 > $OUT/build_new.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build_new.log; exit 1; }
wait
echo "builds ok ($((SECONDS - t0)) s)"
/tmp/new/chapters/06_train_mlp/06_train_mlp_gpu_tests --gtest_filter='DgatedGemm.*' > $OUT/dgated_tests_new.log 2>&1; echo "new DgatedGemm rc=$?"
grep -E "FAILED|PASSED|differ" $OUT/dgated_tests_new.log | head -14
for r in 1 2; do
  for v in base new; do
    /tmp/$v/bench/bench_train_mlp --iters 50 > $OUT/bench_${v}_$r.txt 2>&1
    echo "== $v $r"; grep -E "\(c\)|\(d\)|floor" $OUT/bench_${v}_$r.txt | head -24
  done
done
echo "($((SECONDS - t0)) s)"
for r in 1 2 3; do
  for v in base new; do
    rm -rf /tmp/tr && /tmp/$v/06_train_mlp --mode epilogue --trace-dir /tmp/tr > $OUT/epi_${v}_$r.txt 2>&1
    f=$(ls /tmp/tr/*.json | head -1); echo "== $v $r: $(/tmp/new/tools/ladder-trace summary --steps $f 2>&1 | grep -E 'ProfilerStep#' | tr -s ' ' | tr '\n' ';')"
    /tmp/new/tools/ladder-trace kernels $f > $OUT/kernels_${v}_$r.txt 2>&1
  done
done
grep -h "dgated\|transpose\|keep" $OUT/kernels_*_1.txt
echo "($((SECONDS - t0)) s)"
