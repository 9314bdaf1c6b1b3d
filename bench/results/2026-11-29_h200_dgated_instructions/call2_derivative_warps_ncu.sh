#!/usr/bin/env bash
# A: the working tree (dgated_gemm's epilogue addresses stepped, dh packed as it is staged). E: A with the GELU
# derivative's 2 moved onto the inner derivative (one multiply fewer an element), its bits checked on every bf16
# input against the form before. D: A with 10 epilogue warps, F: with 6. Builds, checks, bench_train_mlp in turn
# twice, then Nsight Compute's warp states and per-instruction samples of A's kernel.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
t0=$SECONDS
VARS="A E D F"
for v in $VARS; do
  src=/tmp/s_$v; rm -rf $src && mkdir -p $src && cp -r $(ls -A | grep -v '^build$\|^.exp$\|^.git$') $src/
  [ $v = E ] && cp .exp/s2/gelu_backward_E.cuh $src/06_train_mlp/gelu_backward.cuh
  [ $v = D -o $v = F ] && cp .exp/s2/dgated_gemm_$v.cu $src/06_train_mlp/dgated_gemm.cu
  ( cmake -S $src -B /tmp/b_$v -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/b_$v --target bench_train_mlp 06_train_mlp_gpu_tests -j4 > $OUT/build_$v.log 2>&1 || echo "$v build failed" ) &
done
nvcc -O3 -std=c++17 -arch=sm_90 -I/tmp/s_E -I/tmp/s_E/common -o /tmp/dc .exp/s2/deriv_check.cu && /tmp/dc | tee $OUT/deriv_check.txt
wait
echo "builds ok ($((SECONDS - t0)) s)"
/tmp/b_E/chapters/06_train_mlp/06_train_mlp_gpu_tests > $OUT/tests_E.log 2>&1; echo "E all 06 GPU tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/tests_E.log | tr '\n' ' ')"
for v in D F; do
  /tmp/b_$v/chapters/06_train_mlp/06_train_mlp_gpu_tests --gtest_filter='DgatedGemm.*' > $OUT/tests_$v.log 2>&1; echo "$v DgatedGemm rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/tests_$v.log | tr '\n' ' ')"
done
echo "($((SECONDS - t0)) s)"
for r in 1 2; do
  for v in $VARS; do
    /tmp/b_$v/bench/bench_train_mlp --iters 50 > $OUT/bench_${v}_$r.txt 2>&1
    echo "== $v $r: $(grep -E '^8192,768,3072 .*\(c\) dgated|^8192,768,3072 .*floor|^8192,4096,11008 .*\(c\) dgated|^8192,4096,11008 .*\(b\)' $OUT/bench_${v}_$r.txt | tr -s ' ' | tr '\n' ';')"
  done
done
echo "($((SECONDS - t0)) s)"
timeout 200 ncu --kernel-name regex:dgated_gemm_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters -o $OUT/prof_A /tmp/b_A/bench/bench_train_mlp --iters 3 > $OUT/ncu_A.log 2>&1; echo "ncu rc=$?"
ncu -i $OUT/prof_A.ncu-rep --page details > $OUT/ncu_A_details.txt 2>&1
ncu -i $OUT/prof_A.ncu-rep --page source --csv --print-source sass > $OUT/ncu_A_sass.csv 2>&1; echo "sass csv rc=$? $(wc -l < $OUT/ncu_A_sass.csv) lines"
echo "($((SECONDS - t0)) s)"
cd $OUT && tar czf logs.tgz build_*.log tests_*.log ncu_A.log && rm -f build_*.log tests_*.log ncu_A.log && tar czf bench.tgz bench_*.txt && rm -f bench_*.txt && tar czf ncu.tgz prof_A.ncu-rep ncu_A_details.txt ncu_A_sass.csv && rm -f prof_A.ncu-rep ncu_A_details.txt ncu_A_sass.csv
