#!/usr/bin/env bash
# The training forward on 128 x 96 tiles of h with four stages (committed tree), its tests; beside the kernel before
# (keep_exp variant 0) and a GELU with its constants folded (variants 14, 15; checked on all 65536 bf16 inputs first);
# then 06's epilogue step recorded three times.
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
cmake --build /tmp/b --target fwd_bench 06_train_mlp 06_train_mlp_gpu_tests ladder-trace -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
T=$(find /tmp/b -name 06_train_mlp_gpu_tests -type f | head -1); B=$(find /tmp/b -name 06_train_mlp -type f -perm -u+x | head -1)
timeout 120 $T > $OUT/gpu_tests06.log 2>&1; echo "06 gpu tests rc=$?"; grep -E "^\[  (FAILED|PASSED) |tests ran" $OUT/gpu_tests06.log | head
for shape in "--batch 3 --seq 111 --dim 200 --hidden 1000" "--batch 1 --seq 37 --dim 24 --hidden 80" "--batch 64 --seq 128 --dim 768 --hidden 3072"; do
  timeout 60 $B $shape --mode epilogue --check-only > /tmp/chk.txt 2>&1; echo "check-only $shape rc=$?"; tail -2 /tmp/chk.txt
done 2>&1 | tee $OUT/checks.txt | cut -c1-150
echo "($((SECONDS - t0)) s)"
timeout 200 /tmp/b/bench/fwd_bench 8 > $OUT/fwd_bench.txt 2>&1; echo "rc=$?"
grep -E "folded|bits|median" $OUT/fwd_bench.txt
echo "($((SECONDS - t0)) s)"
for r in 1 2 3; do
  rm -rf /tmp/tr && timeout 60 $B --mode epilogue --trace-dir /tmp/tr > /dev/null 2>&1
  f=$(ls /tmp/tr/*.json | head -1)
  /tmp/b/tools/ladder-trace kernels $f > $OUT/step_kernels_$r.txt 2>&1
  /tmp/b/tools/ladder-trace summary --steps $f > $OUT/step_summary_$r.txt 2>&1
  echo "round $r: $(grep -E "keep" $OUT/step_kernels_$r.txt | tr -s ' ' | cut -d' ' -f2,5,6) | $(grep ProfilerStep $OUT/step_summary_$r.txt | awk '{printf "%s ", $4}')"
done
echo "($((SECONDS - t0)) s)"
