#!/usr/bin/env bash
# dgated_gemm with 8 epilogue warps (G: two on each of the SM's four schedulers) against the committed tree's 7.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
t0=$SECONDS
src=/tmp/s_G; rm -rf $src && mkdir -p $src && cp -r $(ls -A | grep -v '^build$\|^.exp$\|^.git$') $src/ && cp .exp/s2/dgated_gemm_G.cu $src/06_train_mlp/dgated_gemm.cu
( cmake -S $src -B /tmp/G -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/G --target bench_train_mlp 06_train_mlp 06_train_mlp_gpu_tests -j8 > $OUT/build_G.log 2>&1 || echo "G build failed" ) &
cmake -S . -B /tmp/base -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/base --target bench_train_mlp 06_train_mlp ladder-trace -j8 > $OUT/build_base.log 2>&1 || echo "base build failed"
wait
echo "builds ok ($((SECONDS - t0)) s)"
/tmp/G/chapters/06_train_mlp/06_train_mlp_gpu_tests --gtest_filter='DgatedGemm.*' > $OUT/tests_G.log 2>&1; echo "G DgatedGemm rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/tests_G.log | tr '\n' ' ')"
for r in 1 2; do
  for v in base G; do
    /tmp/$v/bench/bench_train_mlp --iters 50 > $OUT/bench_${v}_$r.txt 2>&1
    echo "== $v $r: $(grep -E '^8192,768,3072 .*\(c\) dgated|^8192,768,3072 .*floor|^8192,4096,11008 .*\(c\) dgated' $OUT/bench_${v}_$r.txt | tr -s ' ' | tr '\n' ';')"
  done
done
for r in 1 2; do
  for v in base G; do
    rm -rf /tmp/tr && /tmp/$v/06_train_mlp --mode epilogue --trace-dir /tmp/tr > /dev/null 2>&1
    f=$(ls /tmp/tr/*.json | head -1); echo "== $v $r: $(/tmp/base/tools/ladder-trace summary --steps $f 2>&1 | grep -E 'ProfilerStep#' | tr -s ' ' | cut -d' ' -f2,5 | tr '\n' ';') $(/tmp/base/tools/ladder-trace kernels $f 2>&1 | grep -E 'keep|dgated' | tr -s ' ' | cut -d' ' -f2,6 | tr '\n' ' ')"
  done
done | tee $OUT/steps.txt
echo "($((SECONDS - t0)) s)"
cd $OUT && tar czf logs.tgz build_*.log tests_G.log && rm -f build_*.log tests_G.log && tar czf bench.tgz bench_*.txt && rm -f bench_*.txt
