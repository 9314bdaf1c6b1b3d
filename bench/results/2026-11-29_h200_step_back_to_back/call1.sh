#!/usr/bin/env bash
# The tree with ladder::gate_up_dx (LadderGEGLUMLP's gate and up weights stacked, dx one GEMM eager and compiled): built
# with torch; 05's GPU tests; 06's four modes and PyTorch's seven training steps recorded; the memory-mix diagnostic;
# bench_train_mlp; every other GPU test; the sanitizer tests of 06 and of 04's Hopper kernels.
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
bash .exp/fin/call_record.sh > $OUT/record_out.txt 2>&1; grep -E "^ladder|^compile|^eager|^liger|rc=" $OUT/record_out.txt | cut -c1-100
grep -A3 -E "06_train_mlp_epilogue.json|torch_06_train_mlp_(compile|ladder|ladder_compile|liger|liger_compile).json" $OUT/steps.txt
echo "($((SECONDS - t0)) s)"
python3 .exp/s4/memory_mix.py > $OUT/t/memory_mix.txt 2>&1; cat $OUT/t/memory_mix.txt
build/bench/bench_train_mlp --iters 50 > $OUT/t/bench_train_mlp.txt 2>&1
grep -E '^8192,768,3072 .*\(c\) dgated|^8192,768,3072 .*floor|^8192,4096,11008 .*\(c\) dgated|^8192,4096,11008 .*\(b\)' $OUT/t/bench_train_mlp.txt
echo "($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -E 05_torch_op -j4 --output-on-failure > $OUT/t/ctest_gpu_rest.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/t/ctest_gpu_rest.log | head -20; echo "($((SECONDS - t0)) s)"
awk -f scripts/skip_reasons.awk $OUT/t/ctest_gpu_rest.log build/Testing/Temporary/LastTest.log | sort -rn > $OUT/t/not_run.txt; head -3 $OUT/t/not_run.txt | cut -c1-80
ctest --test-dir build -L sanitizer -R 06_ -j3 > $OUT/t/ctest_sanitizer06.log 2>&1
grep -E "tests passed|Failed" $OUT/t/ctest_sanitizer06.log | head
ctest --test-dir build -L sanitizer -R "04_epilogue_mlp\." -j3 > $OUT/t/ctest_sanitizer04.log 2>&1
grep -E "tests passed|Failed" $OUT/t/ctest_sanitizer04.log | head; echo "($((SECONDS - t0)) s)"
rm -f $OUT/t/configure.log; gzip $OUT/t/build.log
cd $OUT && tar czf tests.tgz t && rm -rf t
