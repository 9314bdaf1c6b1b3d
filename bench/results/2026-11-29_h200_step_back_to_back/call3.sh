#!/usr/bin/env bash
# The tree with ladder::geglu_mlp_backward (LadderGEGLUMLP's backward as one C++ op; dx one GEMM over the stacked
# weights): built with torch; 05's GPU tests; torch_train_step.py in turn with the tree before (old: the Python
# backward, dx two GEMMs) three times; then 06's four modes and PyTorch's seven steps recorded; bench_train_mlp; every
# other GPU test; the sanitizer tests of 06 and 04's Hopper kernels.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/t
t0=$SECONDS
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 ctest --test-dir build -R 05_torch_op -j2 --output-on-failure > $OUT/t/ctest_05.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)|Error|FAIL" $OUT/t/ctest_05.log | head -12; echo "($((SECONDS - t0)) s)"
for r in 1 2 3; do
  for v in old new; do
    p=05_torch_op; [ $v = old ] && p=.exp/s4/old
    LADDER_TORCH_LIB=build/chapters/05_torch_op/libladder_torch_ops.so PYTHONPATH=$p python3 06_train_mlp/torch_train_step.py \
      --out /tmp/ab_$v --modes compile,ladder,ladder_compile 2>&1 | grep -E "GPU busy" | sed "s/^/$v $r /" | cut -c1-70
  done
done | tee $OUT/t/steps_ab.txt
echo "($((SECONDS - t0)) s)"
bash .exp/fin/call_record.sh > $OUT/record_out.txt 2>&1; grep -E "^ladder|^compile|^eager|^liger|rc=" $OUT/record_out.txt | cut -c1-100
grep -A4 -E "06_train_mlp_epilogue.json|torch_06_train_mlp_(compile|ladder|ladder_compile).json" $OUT/steps.txt | grep -E "==|Profiler"
echo "($((SECONDS - t0)) s)"
build/bench/bench_train_mlp --iters 50 > $OUT/t/bench_train_mlp.txt 2>&1
grep -E '^8192,768,3072 .*\(c\) dgated|^8192,768,3072 .*floor|^8192,4096,11008 .*\(c\) dgated|^8192,4096,11008 .*\(b\)' $OUT/t/bench_train_mlp.txt
LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -E 05_torch_op -j4 --output-on-failure > $OUT/t/ctest_gpu_rest.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/t/ctest_gpu_rest.log | head -20; echo "($((SECONDS - t0)) s)"
awk -f scripts/skip_reasons.awk $OUT/t/ctest_gpu_rest.log build/Testing/Temporary/LastTest.log | sort -rn > $OUT/t/not_run.txt; head -3 $OUT/t/not_run.txt | cut -c1-80
ctest --test-dir build -L sanitizer -R 06_ -j3 > $OUT/t/ctest_sanitizer06.log 2>&1
grep -E "tests passed|Failed" $OUT/t/ctest_sanitizer06.log | head
ctest --test-dir build -L sanitizer -R "04_epilogue_mlp\." -j3 > $OUT/t/ctest_sanitizer04.log 2>&1
grep -E "tests passed|Failed" $OUT/t/ctest_sanitizer04.log | head; echo "($((SECONDS - t0)) s)"
rm -f $OUT/t/configure.log; gzip $OUT/t/build.log
cd $OUT && tar czf tests.tgz t && rm -rf t
