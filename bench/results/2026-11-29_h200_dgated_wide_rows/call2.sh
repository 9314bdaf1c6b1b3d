#!/usr/bin/env bash
# The tree with the wide kernel's epilogue stepping rows and eight vectors a batch, built with torch: every GPU test,
# 05's CPU tests, 06's sanitizer tests, 06's four modes' checks; bench_train_mlp twice; then a mutant of the wide
# kernel (each epilogue thread skips its last row) against 06's dgated test.
set -uo pipefail
export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/t
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short | grep -v "^??" ; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
rm -rf /tmp/m && mkdir /tmp/m && cp -r $(ls -A | grep -v '^build$') /tmp/m/
sed -i 's/      if (k >= rows_in) break;/      if (k + kRowStep >= rows_in) break;/' /tmp/m/06_train_mlp/dgated_gemm_wide.cu
grep -c "k + kRowStep >= rows_in" /tmp/m/06_train_mlp/dgated_gemm_wide.cu
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
( cd /tmp/m && cmake -S . -B /tmp/mb -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/mcfg.log 2>&1 && cmake --build /tmp/mb --target 06_train_mlp_gpu_tests -j4 > /tmp/mbuild.log 2>&1; echo "mutant build rc=$?" > $OUT/t/mutant_build.txt ) &
LADDER_REQUIRE_GPU=1 timeout 330 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/t/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)|Timeout" $OUT/t/ctest_gpu.log | head -20; echo "($((SECONDS - t0)) s)"
awk -f scripts/skip_reasons.awk $OUT/t/ctest_gpu.log build/Testing/Temporary/LastTest.log | sort -rn > $OUT/t/not_run.txt; head -3 $OUT/t/not_run.txt | cut -c1-100
ctest --test-dir build -R 05_torch_op.cpu_tests > $OUT/t/ctest_05_cpu.log 2>&1; grep -E "tests passed" $OUT/t/ctest_05_cpu.log
timeout 150 ctest --test-dir build -L sanitizer -R 06_ -j3 > $OUT/t/ctest_sanitizer06.log 2>&1; grep -E "tests passed" $OUT/t/ctest_sanitizer06.log
for m in eager fused epilogue recompute; do timeout 60 build/06_train_mlp --mode $m --check-only > $OUT/t/check_$m.txt 2>&1; echo "$m rc=$? $(grep checksum $OUT/t/check_$m.txt)"; done
echo "($((SECONDS - t0)) s)"
for r in 1 2; do
  timeout 120 build/bench/bench_train_mlp --iters 50 > $OUT/t/bench_train_mlp_$r.txt 2>&1; echo "bench rc=$?"
  grep -E "\(a\) cublas|\(b\)|\(c\)|floor|rror" $OUT/t/bench_train_mlp_$r.txt | cut -c1-120
done
echo "($((SECONDS - t0)) s)"
wait; cat $OUT/t/mutant_build.txt
T=$(find /tmp/mb -name 06_train_mlp_gpu_tests -type f | head -1)
timeout 120 $T --gtest_filter='DgatedGemm*' > $OUT/t/mutant.log 2>&1; echo "mutant rc=$?"; grep -E "^\[  (FAILED|PASSED) |Failure|differ|NaN" $OUT/t/mutant.log | head -8 | cut -c1-200
rm -f $OUT/t/configure.log; gzip $OUT/t/build.log
cd $OUT && tar czf call2.tgz t && rm -rf t; echo "($((SECONDS - t0)) s)"
