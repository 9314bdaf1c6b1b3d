#!/usr/bin/env bash
# bench_elementwise and bench_epilogue_mlp with the rest bench_train_mlp has (bench/rest.h): each run without rest
# (--rest-ms 0, the benches before) and with 300 ms (the default now), in turn, the SM clock logged every 100 ms beside
# each run; then bench_train_mlp once, as committed.
set -uo pipefail
export CXX=/usr/bin/g++
mkdir -p $OUT/t
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
rm -rf build
cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_elementwise bench_epilogue_mlp bench_train_mlp > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
run() {  # name, timeout, command...
  local name=$1 limit=$2; shift 2
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $OUT/t/smi_$name.csv 2>&1 &
  local smi=$!
  timeout $limit "$@" > $OUT/t/$name.txt 2>&1; echo "$name rc=$? ($((SECONDS - t0)) s)"
  kill $smi; wait $smi 2>/dev/null
}
for i in 1 2; do
  run elementwise_rest0_$i 90 build/bench/bench_elementwise --rest-ms 0
  run elementwise_rest300_$i 90 build/bench/bench_elementwise
done
grep -hE "^(gelu_mul|copy) " $OUT/t/elementwise_*.txt | head -0
for i in 1 2; do
  run epilogue_mlp_rest0_$i 120 build/bench/bench_epilogue_mlp --rest-ms 0
  run epilogue_mlp_rest300_$i 120 build/bench/bench_epilogue_mlp
done
for f in $OUT/t/epilogue_mlp_*.txt; do echo "== $(basename $f)"; grep -E "^(8192,768,3072|8192,4096,11008) " $f | cut -c1-100; done
run bench_train_mlp 200 build/bench/bench_train_mlp --iters 50
grep -E "^8192,768,3072 .*(\(b\)|\(c\)|floor)|^8192,4096,11008 .*(\(b\)|\(c\) dgated|floor)|rror" $OUT/t/bench_train_mlp.txt | cut -c1-110
rm -f $OUT/t/configure.log
cd $OUT && tar czf call1.tgz t && rm -rf t; echo "($((SECONDS - t0)) s)"
