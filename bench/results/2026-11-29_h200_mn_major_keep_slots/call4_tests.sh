#!/usr/bin/env bash
# The committed tree (W_down read MN-major, the keep schedule): built with torch; bench_train_mlp; a mutant (the MN-major
# descriptor with no panel stride) against the DgatedGemm tests; every GPU test; 06 under the sanitizer.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; python3 -c 'import torch; print("torch", torch.__version__)'; } > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt
t0=$SECONDS
rm -rf /tmp/m && mkdir /tmp/m && cp -r $(ls -A | grep -v '^build') /tmp/m/
sed -i "s/sw128_mnmajor_desc(b_tile + kk \* 16 \* 128, kBK \* 128)/sw128_mnmajor_desc(b_tile + kk * 16 * 128, 0)  \/\/ MUTANT/" /tmp/m/common/hopper/pipeline.cuh
grep -c MUTANT /tmp/m/common/hopper/pipeline.cuh
( cmake -S /tmp/m -B /tmp/m/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/cfg-mutant.log 2>&1 && cmake --build /tmp/m/b --target 06_train_mlp_gpu_tests -j4 > $OUT/build-mutant.log 2>&1 || echo "mutant build failed" ) &
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build build -j14 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
wait
echo "build ok ($((SECONDS - t0)) s)"
build/bench/bench_train_mlp --iters 50 > $OUT/bench_train_mlp.txt 2>&1; grep -E "\(b\)|kernel|narrow|wide|floor" $OUT/bench_train_mlp.txt
echo "($((SECONDS - t0)) s)"
/tmp/m/b/chapters/06_train_mlp/06_train_mlp_gpu_tests --gtest_filter='DgatedGemm.*' > $OUT/mutant_tests.log 2>&1; echo "mutant rc=$?"
grep -E "FAILED|PASSED|differ|within" $OUT/mutant_tests.log | head -8
LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest_gpu.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)" $OUT/ctest_gpu.log | head -20; echo "($((SECONDS - t0)) s)"
awk -f scripts/skip_reasons.awk $OUT/ctest_gpu.log build/Testing/Temporary/LastTest.log | sort -rn > $OUT/not_run.txt; head -3 $OUT/not_run.txt
ctest --test-dir build -L sanitizer -R 06_ > $OUT/ctest_sanitizer06.log 2>&1
grep -E "tests passed|Failed" $OUT/ctest_sanitizer06.log | head; echo "($((SECONDS - t0)) s)"
cd $OUT && tar czf build_logs.tgz configure.log build.log cfg-mutant.log build-mutant.log && rm -f configure.log build.log cfg-mutant.log build-mutant.log
