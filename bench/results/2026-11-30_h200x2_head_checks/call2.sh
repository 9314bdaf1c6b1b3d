#!/usr/bin/env bash
# The head with torch on the same machine: the tree built with the op library, chapter 05's CPU and GPU tests
# (LADDER_REQUIRE_GPU=1), then 06's four modes and PyTorch's seven training steps recorded in one call
# (bench/results/2026-11-30_h200x2_head_checks/call2_record.sh), and each step's GPU busy over torch.compile's.
set -uo pipefail
export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/t
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j32 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 timeout 150 ctest --test-dir build -R 05_torch_op --output-on-failure > $OUT/t/ctest_05.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/t/ctest_05.log | head -5; grep -E " passed| failed| skipped" $OUT/t/ctest_05.log | tail -3; echo "($((SECONDS - t0)) s)"
bash bench/results/2026-11-30_h200x2_head_checks/call2_record.sh > $OUT/t/record_out.txt 2>&1; grep -E "^ladder|^compile|^eager|^liger|rc=|torch" $OUT/t/record_out.txt | cut -c1-120
mv $OUT/gpu.txt $OUT/t/record_gpu.txt; mv $OUT/record.log $OUT/torch_train_step.txt $OUT/steps.txt $OUT/t/ 2>/dev/null
python3 bench/results/2026-11-29_h200_step_back_to_back/ratios.py $OUT/t/steps.txt | tee $OUT/t/ratios.txt
rm -f $OUT/t/configure.log; gzip $OUT/t/build.log
cd $OUT && tar czf call2.tgz t && rm -rf t; echo "($((SECONDS - t0)) s)"
