#!/usr/bin/env bash
# Does the memset flush's dirty L2 cost the timed run? A micro test (copy/read/write after a memset, a read, both),
# then bench_train_mlp and bench_elementwise with the flush as committed and with a read of the flush buffer after it.
set -uo pipefail
t0=$SECONDS
mkdir -p $OUT/t
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
nvcc -O3 -arch=sm_90 -o /tmp/flush .exp/s15/flush.cu && /tmp/flush > $OUT/t/flush_micro.txt 2>&1; cat $OUT/t/flush_micro.txt
cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build --target bench_train_mlp bench_elementwise > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
for i in 1 2; do
  for f in memset read; do
    LADDER_FLUSH=$f timeout 150 build/bench/bench_train_mlp > $OUT/t/train_${f}_$i.txt 2>&1; echo "train $f $i rc=$? ($((SECONDS - t0)) s)"
    grep -E "8192,768,3072 \((a|b|c)\)|copy of|floor" $OUT/t/train_${f}_$i.txt | cut -c1-140
  done
done
for f in memset read; do
  LADDER_FLUSH=$f timeout 100 build/bench/bench_elementwise > $OUT/t/elementwise_$f.txt 2>&1; echo "elementwise $f rc=$? ($((SECONDS - t0)) s)"
  grep -iE "copy" $OUT/t/elementwise_$f.txt | head -6 | cut -c1-140
done
rm -f $OUT/t/configure.log $OUT/t/build.log
cd $OUT && tar czf call1.tgz t && rm -rf t; echo "($((SECONDS - t0)) s)"
