#!/usr/bin/env bash
# Chapter 05 with torch on one H200, after the ops began refusing overlapping outputs and profile_mlp.py's flush began
# to read: the op library built, 05's CPU and GPU tests (LADDER_REQUIRE_GPU=1), then profile_mlp.py.
set -uo pipefail
export CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
t0=$SECONDS
mkdir -p $OUT/t
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; python3 -c "import torch; print('torch', torch.__version__)"; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build --target ladder_torch_ops -j16 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 timeout 150 ctest --test-dir build -R 05_torch_op --output-on-failure > $OUT/t/ctest_05.log 2>&1
grep -E "tests passed|Passed|Failed|Skipped" $OUT/t/ctest_05.log | head; grep -E "passed|failed|skipped" $OUT/t/ctest_05.log | tail -3; echo "($((SECONDS - t0)) s)"
timeout $((400 - SECONDS + t0)) python3 05_torch_op/profile_mlp.py --out-dir /tmp/p05 > $OUT/t/profile_mlp.txt 2>&1; echo "profile_mlp rc=$? ($((SECONDS - t0)) s)"
grep -v Warning $OUT/t/profile_mlp.txt | tail -14 | cut -c1-160
rm -f $OUT/t/configure.log $OUT/t/build.log
cd $OUT && tar czf call1.tgz t && rm -rf t
