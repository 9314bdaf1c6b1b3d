#!/usr/bin/env bash
# The committed tree (new: the epilogue walks row pointers) against the tree before it (base): both built, new with
# torch; DgatedGemm on new; bench_train_mlp in turn twice; 06 --mode epilogue in turn twice. Then on new: every GPU
# test, the sanitizer tests of 06 and of 04's Hopper kernels, and 06's four modes and PyTorch's seven steps recorded.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/t
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; python3 -c 'import torch; print("torch", torch.__version__)'; } > $OUT/t/gpu.txt 2>&1
cat $OUT/t/gpu.txt
t0=$SECONDS
( cmake -S .exp/s3/base -B /tmp/base -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/base --target bench_train_mlp 06_train_mlp -j4 > $OUT/t/build_base.log 2>&1 || echo "base build failed" ) &
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j12 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
wait
echo "builds ok ($((SECONDS - t0)) s)"
build/chapters/06_train_mlp/06_train_mlp_gpu_tests --gtest_filter='DgatedGemm.*' > $OUT/t/dgated_tests.log 2>&1; echo "DgatedGemm rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/t/dgated_tests.log | tr '\n' ' ')"
for r in 1 2; do
  for v in base new; do
    b=/tmp/base; [ $v = new ] && b=build
    $b/bench/bench_train_mlp --iters 50 > $OUT/t/bench_${v}_$r.txt 2>&1
    echo "== $v $r: $(grep -E '^8192,768,3072 .*\(c\) dgated|^8192,768,3072 .*floor|^8192,4096,11008 .*\(c\) dgated|^8192,4096,11008 .*\(b\)' $OUT/t/bench_${v}_$r.txt | tr -s ' ' | cut -d' ' -f1-5,9- | tr '\n' ';')"
  done
done
for r in 1 2; do
  for v in base new; do
    b=/tmp/base; [ $v = new ] && b=build
    rm -rf /tmp/tr && $b/06_train_mlp --mode epilogue --trace-dir /tmp/tr > /dev/null 2>&1
    f=$(ls /tmp/tr/*.json | head -1); echo "== $v $r: $(build/tools/ladder-trace summary --steps $f 2>&1 | grep -E 'ProfilerStep#' | tr -s ' ' | cut -d' ' -f2,5 | tr '\n' ';') $(build/tools/ladder-trace kernels $f 2>&1 | grep -E 'dgated' | tr -s ' ' | cut -d' ' -f2,6)"
  done
done | tee $OUT/t/steps_ab.txt
echo "($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/t/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/t/ctest_gpu.log | head -20; echo "($((SECONDS - t0)) s)"
awk -f scripts/skip_reasons.awk $OUT/t/ctest_gpu.log build/Testing/Temporary/LastTest.log | sort -rn > $OUT/t/not_run.txt; head -3 $OUT/t/not_run.txt | cut -c1-80
ctest --test-dir build -L sanitizer -R 06_ -j3 > $OUT/t/ctest_sanitizer06.log 2>&1
grep -E "tests passed|Failed" $OUT/t/ctest_sanitizer06.log | head
ctest --test-dir build -L sanitizer -R "04_epilogue_mlp\." -j3 > $OUT/t/ctest_sanitizer04.log 2>&1
grep -E "tests passed|Failed" $OUT/t/ctest_sanitizer04.log | head; echo "($((SECONDS - t0)) s)"
rm -f $OUT/t/configure.log; gzip $OUT/t/build.log $OUT/t/build_base.log
cd $OUT && tar czf tests.tgz t && rm -rf t && cd - > /dev/null
bash .exp/fin/call_record.sh
