#!/usr/bin/env bash
# The head, built with torch: every GPU test (05's pytest suites included) and 06's sanitizer tests.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
nvidia-smi -L; git log --oneline -1 2>/dev/null
t0=$SECONDS
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > /dev/null 2>&1 || exit 1
cmake --build build -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/ctest_gpu.log | head; echo "($((SECONDS - t0)) s)"
ctest --test-dir build -L sanitizer -R 06_ -j3 > $OUT/ctest_sanitizer06.log 2>&1
grep -E "tests passed|Failed" $OUT/ctest_sanitizer06.log | head; echo "($((SECONDS - t0)) s)"
gzip $OUT/build.log
