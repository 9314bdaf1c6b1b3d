#!/usr/bin/env bash
# The chapters' own GPU ctests (01 to 04 and 06: checks against the CPU, end-to-end traces, same-output pairs) on one
# H200, after the trace tests began to require a step and a kernel and the test helpers to refuse stray arguments.
set -uo pipefail
t0=$SECONDS
mkdir -p $OUT/t
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target 01_matmul_add 02_linear 03_simple_mlp 03_fused_mlp 04_epilogue_mlp 06_train_mlp ladder_check_trace > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 timeout 200 ctest --test-dir build -L gpu -R "^(01|02|03|04|06)_" -j4 --output-on-failure > $OUT/t/ctest_gpu_chapters.log 2>&1
grep -E "tests passed|\(Failed\)|Skipped|Timeout" $OUT/t/ctest_gpu_chapters.log | head -12; echo "($((SECONDS - t0)) s)"
rm -f $OUT/t/configure.log $OUT/t/build.log
cd $OUT && tar czf call1.tgz t && rm -rf t
