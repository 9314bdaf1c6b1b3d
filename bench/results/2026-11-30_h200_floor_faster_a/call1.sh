#!/usr/bin/env bash
# bench_train_mlp after its floor began taking the faster of its two (a) rows: built alone and run twice.
set -uo pipefail
mkdir -p $OUT/t
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build --target bench_train_mlp -j16 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
for i in 1 2; do
  build/bench/bench_train_mlp > $OUT/t/bench_train_mlp_$i.txt 2>&1; echo "run $i rc=$? ($((SECONDS - t0)) s)"
  grep -E "\(a\)|\(c\) dgated_gemm kernel|copy of|floor" $OUT/t/bench_train_mlp_$i.txt | grep -E "^8192,768,3072|^8192,4096,11008|floor" | cut -c1-150
done
rm -f $OUT/t/configure.log $OUT/t/build.log
cd $OUT && tar czf call1.tgz t && rm -rf t
