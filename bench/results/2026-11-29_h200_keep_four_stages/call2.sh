#!/usr/bin/env bash
# Where the training forward's time goes (main loop alone, 3 or 4 stages, no stores) and TMA multicast of the weight
# tile to clusters of two, beside cuBLASLt's [g | u] GEMM, standalone at the blog's shape.
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
cmake --build /tmp/b --target fwd_bench -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
(nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 500 > $OUT/clocks.txt &) ; timeout 200 /tmp/b/bench/fwd_bench 8 > $OUT/fwd_bench.txt 2>&1; echo "rc=$?"
grep -E "bits|median|clusters" $OUT/fwd_bench.txt
echo "($((SECONDS - t0)) s)"
pkill -f "nvidia-smi --query"; cut -d, -f1 $OUT/clocks.txt | sort | uniq -c | sort -rn | head -6
