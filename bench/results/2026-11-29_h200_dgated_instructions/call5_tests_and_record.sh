#!/usr/bin/env bash
# The committed tree: built with torch; bench_train_mlp; every GPU test; 04's Hopper and 06's sanitizer tests; then 06's
# four modes and PyTorch's seven training steps recorded (.exp/fin/call_record.sh, on the same build).
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/t
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; python3 -c 'import torch; print("torch", torch.__version__)'; } > $OUT/t/gpu.txt 2>&1
cat $OUT/t/gpu.txt
t0=$SECONDS
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
build/bench/bench_train_mlp --iters 50 > $OUT/t/bench_train_mlp.txt 2>&1; grep -E "\(b\)|kernel|narrow|wide|floor" $OUT/t/bench_train_mlp.txt
LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/t/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/t/ctest_gpu.log | head -20; echo "($((SECONDS - t0)) s)"
awk -f scripts/skip_reasons.awk $OUT/t/ctest_gpu.log build/Testing/Temporary/LastTest.log | sort -rn > $OUT/t/not_run.txt; head -3 $OUT/t/not_run.txt | cut -c1-80
ctest --test-dir build -L sanitizer -R 06_ -j3 > $OUT/t/ctest_sanitizer06.log 2>&1
grep -E "tests passed|Failed" $OUT/t/ctest_sanitizer06.log | head; echo "($((SECONDS - t0)) s)"
ctest --test-dir build -L sanitizer -R "04_epilogue_mlp\." -j3 > $OUT/t/ctest_sanitizer04.log 2>&1
grep -E "tests passed|Failed" $OUT/t/ctest_sanitizer04.log | head; echo "($((SECONDS - t0)) s)"
rm -f $OUT/t/configure.log; gzip $OUT/t/build.log
cd $OUT && tar czf tests.tgz t && rm -rf t && cd - > /dev/null
bash .exp/fin/call_record.sh
