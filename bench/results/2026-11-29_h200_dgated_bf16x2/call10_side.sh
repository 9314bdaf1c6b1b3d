#!/usr/bin/env bash
# The epilogue arithmetic side by side in one call: bench_train_mlp built with the float32 products (before) and with
# the bf16x2 products (after), run alternately, twice each.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1
t0=$SECONDS
rm -rf build
cmake --preset default > /dev/null 2>&1 || exit 1
cmake --build build -j16 --target bench_train_mlp > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
cp build/bench/bench_train_mlp /tmp/after
cp .exp/ov/epilogue_old.cuh 06_train_mlp/dgated_epilogue.cuh  # the file before: git show cd69a71~1:06_train_mlp/dgated_epilogue.cuh
cmake --build build -j16 --target bench_train_mlp > $OUT/build_before.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build_before.log; exit 1; }
cp build/bench/bench_train_mlp /tmp/before
echo "build ok ($((SECONDS - t0)) s)"
for r in 1 2; do for v in before after; do
  timeout 120 /tmp/$v --iters 50 > $OUT/${v}_$r.txt 2>&1; echo "$v $r rc $?"; grep -E "\(b\)|kernel|narrow|wide|floor" $OUT/${v}_$r.txt | grep -E "^8192,768|^8192,4096"
done; done
cd $OUT && tar czf build_logs.tgz build*.log && rm build*.log
echo "($((SECONDS - t0)) s)"
