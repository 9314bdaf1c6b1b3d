#!/usr/bin/env bash
# The committed tree (LadderGEGLUMLP's gate and up weights stacked): built with torch; 05's tests first; 06's four modes
# and PyTorch's seven training steps recorded; then every other GPU test.
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

bash .exp/fin/call_record.sh > $OUT/record_out.txt 2>&1; grep -E "^ladder|^compile|^eager|^liger|rc=" $OUT/record_out.txt | cut -c1-80; grep -A3 -E "06_train_mlp_epilogue.json|torch_06_train_mlp_(compile|ladder|ladder_compile).json" $OUT/steps.txt
echo "($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -E 05_torch_op -j4 --output-on-failure > $OUT/t/ctest_gpu_rest.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/t/ctest_gpu_rest.log | head -20; echo "($((SECONDS - t0)) s)"
rm -f $OUT/t/configure.log; gzip $OUT/t/build.log
cd $OUT && tar czf tests.tgz t && rm -rf t
