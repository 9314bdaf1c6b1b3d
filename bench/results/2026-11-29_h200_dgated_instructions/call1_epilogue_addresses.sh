#!/usr/bin/env bash
# dgated_gemm's epilogue loop with its addresses stepped (A: the working tree), against the committed tree (base):
# A, A unrolled twice (B), A with 11 epilogue warps (C, 640 threads) and with 10 (D, 608 threads). Each tree builds
# bench_train_mlp and 06's GPU tests; DgatedGemm tests of each variant; bench_train_mlp in turn, twice.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
t0=$SECONDS
VARS="base A B C D"
for v in $VARS; do
  if [ $v = base ]; then src=.exp/s2/base; else
    src=/tmp/s_$v; rm -rf $src && mkdir -p $src && cp -r $(ls -A | grep -v '^build$\|^.exp$\|^.git$') $src/
    [ $v != A ] && cp .exp/s2/dgated_gemm_$v.cu $src/06_train_mlp/dgated_gemm.cu
  fi
  ( cmake -S $src -B /tmp/b_$v -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/b_$v --target bench_train_mlp 06_train_mlp_gpu_tests -j4 > $OUT/build_$v.log 2>&1 || echo "$v build failed" ) &
done
wait
echo "builds ok ($((SECONDS - t0)) s)"
for v in A B C D; do
  /tmp/b_$v/chapters/06_train_mlp/06_train_mlp_gpu_tests --gtest_filter='DgatedGemm.*' > $OUT/dgated_tests_$v.log 2>&1; echo "$v DgatedGemm rc=$? $(grep -cE '^\[       OK' $OUT/dgated_tests_$v.log) ok $(grep -E 'FAILED|differ' $OUT/dgated_tests_$v.log | head -2 | tr '\n' ' ')"
done
echo "($((SECONDS - t0)) s)"
for r in 1 2; do
  for v in $VARS; do
    /tmp/b_$v/bench/bench_train_mlp --iters 50 > $OUT/bench_${v}_$r.txt 2>&1
    echo "== $v $r: $(grep -E '^8192,768,3072 .*\(c\)|^8192,768,3072 .*floor|^8192,4096,11008 .*\(c\)' $OUT/bench_${v}_$r.txt | tr -s ' ' | cut -d' ' -f1,2,3,4,5,6,7 | tr '\n' ';')"
  done
done
echo "($((SECONDS - t0)) s)"
cd $OUT && tar czf logs.tgz build_*.log dgated_tests_*.log && rm -f build_*.log dgated_tests_*.log && tar czf bench.tgz bench_*.txt && rm -f bench_*.txt
