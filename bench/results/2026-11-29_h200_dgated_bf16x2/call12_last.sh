#!/usr/bin/env bash
# The committed tree after its last code edit: built with torch, every GPU test.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
nvidia-smi -L; t0=$SECONDS
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build build -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/ctest_gpu.log | head; echo "($((SECONDS - t0)) s)"
cd $OUT && gzip configure.log build.log
