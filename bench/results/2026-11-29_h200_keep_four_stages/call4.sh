#!/usr/bin/env bash
# The tree with the training forward on 128 x 96 tiles and four stages (06_train_mlp/geglu_gemm_keep.cu), built with torch, in one call: every GPU
# test, 05's meta-tensor tests, 06's sanitizer tests, bench_train_mlp; then 06's four modes and PyTorch's seven
# training steps recorded (.exp/s8/call_record.sh); last, a mutant of the new kernel (the last row of each half
# left unwritten) must fail the new test.
set -uo pipefail
export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/t
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 timeout 240 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/t/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)|Timeout" $OUT/t/ctest_gpu.log | head -20; echo "($((SECONDS - t0)) s)"
awk -f scripts/skip_reasons.awk $OUT/t/ctest_gpu.log build/Testing/Temporary/LastTest.log | sort -rn > $OUT/t/not_run.txt; head -3 $OUT/t/not_run.txt | cut -c1-100
grep -E "GegluGemmKeep|keep_test" $OUT/t/ctest_gpu.log | head -5
grep -q "100% tests passed" $OUT/t/ctest_gpu.log || { cd $OUT && tar czf call4.tgz t; exit 1; }
ctest --test-dir build -R 05_torch_op.cpu_tests --output-on-failure > $OUT/t/ctest_05_cpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/t/ctest_05_cpu.log | head -5
timeout 120 ctest --test-dir build -L sanitizer -R 06_ -j3 > $OUT/t/ctest_sanitizer06.log 2>&1
grep -E "tests passed|Failed" $OUT/t/ctest_sanitizer06.log | head; echo "($((SECONDS - t0)) s)"
build/bench/bench_train_mlp --iters 50 > $OUT/t/bench_train_mlp.txt 2>&1
grep -E '^8192,768,3072 .*\((a|b|c)\)|^8192,768,3072 .*floor|^8192,768,3072 .*copy|^8192,4096,11008 .*\(c\) dgated|^8192,4096,11008 .*\(b\)' $OUT/t/bench_train_mlp.txt
echo "($((SECONDS - t0)) s)"
bash .exp/s8/call_record.sh > $OUT/t/record_out.txt 2>&1; grep -E "^ladder|^compile|^eager|^liger|rc=|torch" $OUT/t/record_out.txt | cut -c1-120
mv $OUT/gpu.txt $OUT/t/record_gpu.txt; mv $OUT/record.log $OUT/torch_train_step.txt $OUT/steps.txt $OUT/t/ 2>/dev/null
python3 bench/results/2026-11-29_h200_step_back_to_back/ratios.py $OUT/t/steps.txt | tee $OUT/t/ratios.txt
echo "($((SECONDS - t0)) s)"
mkdir -p /tmp/x && tar xzf $OUT/h200.tgz -C /tmp/x
build/tools/ladder-trace kernels /tmp/x/h200/06_train_mlp_epilogue.json > $OUT/t/epilogue_kernels.txt 2>&1
build/tools/ladder-trace kernels /tmp/x/h200/torch_06_train_mlp_compile.json > $OUT/t/compile_kernels.txt 2>&1
grep -E "keep|triton" $OUT/t/epilogue_kernels.txt $OUT/t/compile_kernels.txt | tr -s ' ' | cut -c1-160
python3 - <<'PY' | tee $OUT/t/triton_configs.txt
import json
for e in json.load(open("/tmp/x/h200/torch_06_train_mlp_compile.json"))["traceEvents"]:
    if e.get("cat") == "kernel" and e["name"].startswith("triton"):
        print(e["name"][:48], e["dur"], e["args"].get("grid"), e["args"].get("block"))
PY
cp 06_train_mlp/geglu_gemm_keep.cu /tmp/keep_orig.cu; sed -i 's/for (; row < rows_in; row += kRowStep/for (; row < rows_in - 1; row += kRowStep/' 06_train_mlp/geglu_gemm_keep.cu
grep -c "rows_in - 1" 06_train_mlp/geglu_gemm_keep.cu
cmake --build build --target 06_train_mlp_gpu_tests -j16 > $OUT/t/mutant_build.log 2>&1 || echo "mutant build failed"
timeout 60 build/chapters/06_train_mlp/06_train_mlp_gpu_tests --gtest_filter='GegluGemmKeep.*' > $OUT/t/mutant_tests.log 2>&1; echo "mutant rc=$?"
grep -E "^\[  (FAILED|PASSED|  OK) |differ|unwritten" $OUT/t/mutant_tests.log | head -8
cp /tmp/keep_orig.cu 06_train_mlp/geglu_gemm_keep.cu
rm -f $OUT/t/configure.log; gzip $OUT/t/build.log $OUT/t/mutant_build.log
cd $OUT && tar czf call4.tgz t && rm -rf t; echo "($((SECONDS - t0)) s)"
