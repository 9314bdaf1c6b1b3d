#!/usr/bin/env bash
# bench_train_mlp with its rows timed one after the other (--rounds 1, as before) and in turns (--rounds 5), twice
# each, in turn, with the GPU's SM clock, power and temperature logged every 100 ms beside each run.
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
  for r in 1 5; do
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $OUT/t/smi_rounds${r}_$run.csv 2>&1 &
    smi=$!
    timeout 150 build/bench/bench_train_mlp --iters 50 --rounds $r > $OUT/t/bench_rounds${r}_$run.txt 2>&1; echo "rounds $r run $run rc=$? ($((SECONDS - t0)) s)"
    kill $smi; wait $smi 2>/dev/null
    grep -E "^8192,768,3072 .*(\(c\)|\(d\)|floor)|^8192,4096,11008 .*(\(b\)|\(c\)|\(d\)|floor)" $OUT/t/bench_rounds${r}_$run.txt | cut -c1-110
    awk -F', ' '{c=$2+0; if(NR==1||c<mn)mn=c; if(c>mx)mx=c} END{print "sm clock MHz min " mn " max " mx}' $OUT/t/smi_rounds${r}_$run.csv
  done
done
rm -f $OUT/t/configure.log $OUT/t/build.log
cd $OUT && tar czf call2.tgz t && rm -rf t; echo "($((SECONDS - t0)) s)"
