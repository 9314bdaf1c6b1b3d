#!/usr/bin/env bash
# The folded GELU once more, longer: keep_exp variants 10 (128 x 192, four stages, as committed) and 14 (the same with
# the folded GELU), 16 rounds; then 06's epilogue step with the committed kernel and with a build whose kernel has the
# folded GELU (fold_patch.py), four rounds each in turn, and the 06 GPU tests on the folded build.
set -uo pipefail
export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
cp .exp/s10/keep_exp.cu 06_train_mlp/keep_exp.cu
sed -i 's/SM90A_KERNELS dgated_gemm.cu dgated_gemm_wide.cu geglu_gemm_keep.cu/SM90A_KERNELS dgated_gemm.cu dgated_gemm_wide.cu geglu_gemm_keep.cu keep_exp.cu/' 06_train_mlp/CMakeLists.txt
cat >> bench/CMakeLists.txt <<'CM'
add_executable(fwd_bench ${PROJECT_SOURCE_DIR}/.exp/s10/fwd_bench.cpp)
target_include_directories(fwd_bench PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(fwd_bench PRIVATE 06_train_mlp_kernels ladder_chapter)
CM
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build /tmp/b --target fwd_bench 06_train_mlp ladder-trace -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
python3 .exp/s10/fold_patch.py
cmake -S . -B /tmp/b2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/configure2.log 2>&1 || { tail -5 $OUT/configure2.log; exit 1; }
cmake --build /tmp/b2 --target 06_train_mlp 06_train_mlp_gpu_tests -j16 > $OUT/build2.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build2.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
timeout 120 /tmp/b2/chapters/06_train_mlp/06_train_mlp_gpu_tests --gtest_filter='GegluGemmKeep.*' > $OUT/fold_tests.log 2>&1; echo "fold GegluGemmKeep rc=$?"; grep -E "^\[  (FAILED|PASSED) " $OUT/fold_tests.log
VARIANTS=10,14 timeout 200 /tmp/b/bench/fwd_bench 16 > $OUT/fwd_bench.txt 2>&1; echo "rc=$?"
grep -E "median" $OUT/fwd_bench.txt
echo "($((SECONDS - t0)) s)"
for r in 1 2 3 4; do
  for b in b b2; do
    rm -rf /tmp/tr && timeout 60 /tmp/$b/06_train_mlp --mode epilogue --trace-dir /tmp/tr > /dev/null 2>&1
    f=$(ls /tmp/tr/*.json | head -1)
    echo "round $r $b: $(/tmp/b/tools/ladder-trace kernels $f 2>&1 | grep -E "keep" | tr -s ' ' | cut -d' ' -f2,5,6) | $(/tmp/b/tools/ladder-trace summary --steps $f | grep ProfilerStep | awk '{printf "%s ", $4}')"
  done
done | tee $OUT/steps.txt
echo "($((SECONDS - t0)) s)"
