#!/usr/bin/env bash
# The working tree (new: dgated's epilogue addresses stepped, dh packed as staged, the GELU derivative's 2 moved, wgmma
# descriptors stepped by one add in mma_stage) against the committed tree (base). 04's and 06's GPU tests on new;
# bench_train_mlp and bench_epilogue_mlp in turn; 06 --mode epilogue traced in turn.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
t0=$SECONDS
tg="bench_train_mlp bench_epilogue_mlp 06_train_mlp 06_train_mlp_gpu_tests 04_epilogue_mlp_gpu_tests ladder-trace"
( cmake -S .exp/s2/base -B /tmp/base -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/base --target bench_train_mlp bench_epilogue_mlp 06_train_mlp -j6 > $OUT/build_base.log 2>&1 || echo "base build failed" ) &
cmake -S . -B /tmp/new -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/new --target $tg -j10 > $OUT/build_new.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build_new.log; exit 1; }
wait
echo "builds ok ($((SECONDS - t0)) s)"
/tmp/new/chapters/04_epilogue_mlp/04_epilogue_mlp_gpu_tests > $OUT/tests04.log 2>&1; echo "04 GPU tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/tests04.log | tr '\n' ' ')"
/tmp/new/chapters/06_train_mlp/06_train_mlp_gpu_tests > $OUT/tests06.log 2>&1; echo "06 GPU tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/tests06.log | tr '\n' ' ')"
echo "($((SECONDS - t0)) s)"
for r in 1 2; do
  for v in base new; do
    /tmp/$v/bench/bench_train_mlp --iters 50 > $OUT/bench_${v}_$r.txt 2>&1
    echo "== $v $r: $(grep -E '^8192,768,3072 .*\(c\) dgated|^8192,768,3072 .*floor|^8192,4096,11008 .*\(c\) dgated|^8192,4096,11008 .*\(b\)' $OUT/bench_${v}_$r.txt | tr -s ' ' | tr '\n' ';')"
  done
done
for v in base new; do /tmp/$v/bench/bench_epilogue_mlp --iters 30 > $OUT/bench04_$v.txt 2>&1; done
paste -d'|' <(cut -c1-100 $OUT/bench04_base.txt) <(cut -c40-100 $OUT/bench04_new.txt) | grep -iE "fast|overlap|coop|pingpong|teach|cublas" | head -30
echo "($((SECONDS - t0)) s)"
for r in 1 2 3; do
  for v in base new; do
    rm -rf /tmp/tr && /tmp/$v/06_train_mlp --mode epilogue --trace-dir /tmp/tr > $OUT/epi_${v}_$r.txt 2>&1
    f=$(ls /tmp/tr/*.json | head -1); echo "== $v $r: $(/tmp/new/tools/ladder-trace summary --steps $f 2>&1 | grep -E 'ProfilerStep#' | tr -s ' ' | cut -d' ' -f2,5 | tr '\n' ';') $(/tmp/new/tools/ladder-trace kernels $f 2>&1 | grep -E 'keep|dgated' | tr -s ' ' | cut -d' ' -f2,6 | tr '\n' ' ')"
  done
done | tee $OUT/steps.txt
echo "($((SECONDS - t0)) s)"
cd $OUT && tar czf logs.tgz build_*.log tests0*.log epi_*.txt && rm -f build_*.log tests0*.log epi_*.txt && tar czf bench.tgz bench_*.txt bench04_*.txt && rm -f bench_*.txt bench04_*.txt
