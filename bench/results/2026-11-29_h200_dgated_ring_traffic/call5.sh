#!/usr/bin/env bash
# The head as committed: built with torch; every GPU test (a skipped one fails); 06 under the sanitizer; the
# backward GEMM's benchmark.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; python3 -c 'import torch; print("torch", torch.__version__)'; git log --oneline -1; } > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt
t0=$SECONDS
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build build -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 timeout 300 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)|Timeout" $OUT/ctest_gpu.log | head -20; echo "($((SECONDS - t0)) s)"
awk -f scripts/skip_reasons.awk $OUT/ctest_gpu.log build/Testing/Temporary/LastTest.log | sort -rn > $OUT/not_run.txt; head -3 $OUT/not_run.txt
timeout 150 ctest --test-dir build -L sanitizer -R 06_ > $OUT/ctest_sanitizer06.log 2>&1
grep -E "tests passed|Failed" $OUT/ctest_sanitizer06.log | head; echo "($((SECONDS - t0)) s)"
timeout 60 build/bench/bench_train_mlp --iters 50 > $OUT/bench_train_mlp.txt 2>&1; grep -E "^8192,768,3072 .*(\(c\) dgated|floor)" $OUT/bench_train_mlp.txt
echo "($((SECONDS - t0)) s)"
cd $OUT && tar czf build_logs.tgz configure.log build.log && rm -f configure.log build.log
