#!/usr/bin/env bash
# The head, built with torch: every GPU test (05's pytest suites included), 06's sanitizer tests, then
# bench_train_mlp (the backward GEMM beside its floor and the pair it replaces).
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/t
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/t/gpu.txt 2>&1
git log --oneline -1 >> $OUT/t/gpu.txt 2>/dev/null; cat $OUT/t/gpu.txt
t0=$SECONDS
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/t/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/t/ctest_gpu.log | head -20; echo "($((SECONDS - t0)) s)"
awk -f scripts/skip_reasons.awk $OUT/t/ctest_gpu.log build/Testing/Temporary/LastTest.log | sort -rn > $OUT/t/not_run.txt; head -3 $OUT/t/not_run.txt | cut -c1-100
ctest --test-dir build -R 05_torch_op.cpu_tests --output-on-failure > $OUT/t/ctest_05_cpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/t/ctest_05_cpu.log | head -5
ctest --test-dir build -L sanitizer -R 06_ -j3 > $OUT/t/ctest_sanitizer06.log 2>&1
grep -E "tests passed|Failed" $OUT/t/ctest_sanitizer06.log | head; echo "($((SECONDS - t0)) s)"
build/bench/bench_train_mlp --iters 50 > $OUT/t/bench_train_mlp.txt 2>&1
grep -E '^8192,768,3072 .*\((a|b|c)\)|^8192,768,3072 .*floor|^8192,768,3072 .*copy|^8192,4096,11008 .*\(c\) dgated|^8192,4096,11008 .*\(b\)' $OUT/t/bench_train_mlp.txt
echo "($((SECONDS - t0)) s)"
rm -f $OUT/t/configure.log; gzip $OUT/t/build.log
cd $OUT && tar czf call1.tgz t && rm -rf t
