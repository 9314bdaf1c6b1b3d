#!/usr/bin/env bash
# The head (bench/rest.h, 06 pictures from the H200 set), built with torch, on two H200s: every GPU test (the two-GPU ones included), 05's CPU tests, 06's sanitizer
# tests, and 06's four modes' checks at the blog's shape.
set -uo pipefail
export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/t
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; git log --oneline -1; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j32 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 timeout 330 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/t/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)|Timeout" $OUT/t/ctest_gpu.log | head -20; echo "($((SECONDS - t0)) s)"
awk -f scripts/skip_reasons.awk $OUT/t/ctest_gpu.log build/Testing/Temporary/LastTest.log | sort -rn > $OUT/t/not_run.txt; head -3 $OUT/t/not_run.txt | cut -c1-100
grep -cE "07_tp_mlp.*Passed" $OUT/t/ctest_gpu.log
ctest --test-dir build -R 05_torch_op.cpu_tests > $OUT/t/ctest_05_cpu.log 2>&1; grep -E "tests passed" $OUT/t/ctest_05_cpu.log
timeout 150 ctest --test-dir build -L sanitizer -R 06_ -j3 > $OUT/t/ctest_sanitizer06.log 2>&1; grep -E "tests passed" $OUT/t/ctest_sanitizer06.log
timeout 200 build/bench/bench_train_mlp --iters 50 > $OUT/t/bench_train_mlp.txt 2>&1; echo "bench rc=$?"
grep -E "\(b\)|\(c\)|floor|rror" $OUT/t/bench_train_mlp.txt | cut -c1-120
for m in eager fused epilogue recompute; do timeout 60 build/06_train_mlp --mode $m --check-only > $OUT/t/check_$m.txt 2>&1; echo "$m rc=$? $(grep checksum $OUT/t/check_$m.txt)"; done
rm -f $OUT/t/configure.log $OUT/t/build.log
cd $OUT && tar czf call2.tgz t && rm -rf t; echo "($((SECONDS - t0)) s)"
