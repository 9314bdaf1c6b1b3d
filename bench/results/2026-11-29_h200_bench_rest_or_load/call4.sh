#!/usr/bin/env bash
# bench_train_mlp as committed after this call (each op timed after 300 ms of rest), against no rest (the bench before)
# and against 200 ms of sustained load, in turn, with the GPU's SM clock logged every 100 ms beside each run.
set -uo pipefail
export CXX=/usr/bin/g++
mkdir -p $OUT/t
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
rm -rf build
cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
for name in rest300_1 rest0_1 rest300_2 rest0_2 load200_1; do
  case $name in rest300*) opts="--rest-ms 300" ;; rest0*) opts="--rest-ms 0" ;; load200*) opts="--rest-ms 300 --load-ms 200" ;; esac
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $OUT/t/smi_$name.csv 2>&1 &
  smi=$!
  timeout 200 build/bench/bench_train_mlp --iters 50 $opts > $OUT/t/bench_$name.txt 2>&1; echo "$name ($opts) rc=$? ($((SECONDS - t0)) s)"
  kill $smi; wait $smi 2>/dev/null
  grep -E "^8192,768,3072 .*(\(b\)|\(c\)|\(d\)|floor)|^8192,4096,11008 .*(\(a\)|\(b\)|\(c\)|\(d\)|floor)" $OUT/t/bench_$name.txt | cut -c1-100
done
rm -f $OUT/t/configure.log $OUT/t/build.log
cd $OUT && tar czf call4.tgz t && rm -rf t; echo "($((SECONDS - t0)) s)"
