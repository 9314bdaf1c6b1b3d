#!/usr/bin/env bash
# bench_train_mlp with each op run back to back for --settle-ms before it is timed: 0 (the bench as it was) and 200,
# in turn, twice each, with the GPU's SM clock logged every 100 ms beside each run.
set -uo pipefail
export CXX=/usr/bin/g++
mkdir -p $OUT/t
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
rm -rf build
cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
for run in 1 2; do
  for ms in 0 200; do
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $OUT/t/smi_settle${ms}_$run.csv 2>&1 &
    smi=$!
    timeout 200 build/bench/bench_train_mlp --iters 50 --settle-ms $ms > $OUT/t/bench_settle${ms}_$run.txt 2>&1; echo "settle $ms run $run rc=$? ($((SECONDS - t0)) s)"
    kill $smi; wait $smi 2>/dev/null
    grep -E "^8192,768,3072 .*(\(c\)|\(d\)|floor)|^8192,(2048|4096),[0-9]+ .*(\(a\)|\(b\)|\(c\)|\(d\)|floor)" $OUT/t/bench_settle${ms}_$run.txt | cut -c1-100
  done
done
rm -f $OUT/t/configure.log $OUT/t/build.log
cd $OUT && tar czf call3.tgz t && rm -rf t; echo "($((SECONDS - t0)) s)"
