#!/usr/bin/env bash
# The committed tree: built with torch, every GPU test, 06 under the sanitizer, bench_train_mlp.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; python3 -c 'import torch; print("torch", torch.__version__)'; git log --oneline -1 2>/dev/null; } > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt
t0=$SECONDS
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build build -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/ctest_gpu.log | head -20; echo "($((SECONDS - t0)) s)"
grep -E "M [0-9]+ dim [0-9]+ hidden [0-9]+:" build/Testing/Temporary/LastTest.log > $OUT/dgated_shapes.txt; tail -3 $OUT/dgated_shapes.txt
ctest --test-dir build -L sanitizer -R 06_ > $OUT/ctest_sanitizer06.log 2>&1
grep -E "tests passed|Failed" $OUT/ctest_sanitizer06.log | head; echo "($((SECONDS - t0)) s)"
build/bench/bench_train_mlp --iters 50 > $OUT/bench_train_mlp.txt 2>&1; grep -E "kernel|narrow|wide|floor|\(b\)" $OUT/bench_train_mlp.txt
echo "($((SECONDS - t0)) s)"
