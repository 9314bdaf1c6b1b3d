#!/usr/bin/env bash
# Where keep_warps' time goes: KEEP_FLAGS 1 no h stores, 2 no g/u TMA stores, 3 neither, 4 g/u stored by the epilogue
# warps with 16-byte stores instead of TMA (bits checked), against the old kernel (KEEP_WARPS=0), three rounds.
set -uo pipefail
export CXX=/usr/bin/g++
cat $OUT/../gpu.txt 2>/dev/null; nvidia-smi -L
t0=$SECONDS
cp .exp/s9/geglu_gemm_keep_exp.cu 06_train_mlp/geglu_gemm_keep.cu
cp .exp/s9/keep_warps.cu 06_train_mlp/keep_warps.cu
sed -i 's/SM90A_KERNELS dgated_gemm.cu dgated_gemm_wide.cu geglu_gemm_keep.cu/SM90A_KERNELS dgated_gemm.cu dgated_gemm_wide.cu geglu_gemm_keep.cu keep_warps.cu/' 06_train_mlp/CMakeLists.txt
[ -d /tmp/b ] || cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/configure.log 2>&1
cmake --build /tmp/b --target 06_train_mlp ladder-trace -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
for r in 1 2 3; do
  for v in old 4 8 16 32; do
    w=1; [ $v = old ] && w=0
    rm -rf /tmp/tr && KEEP_GROUP=$v KEEP_FLAGS=4 KEEP_WARPS=$w timeout 30 /tmp/b/06_train_mlp --mode epilogue --trace-dir /tmp/tr > /dev/null 2>&1
    f=$(ls /tmp/tr/*.json | head -1)
    echo "group=$v round $r: $(/tmp/b/tools/ladder-trace kernels $f 2>&1 | grep -E "keep" | tr -s ' ' | cut -d' ' -f2,5,6)"
  done
done | tee $OUT/steps5.txt
echo "($((SECONDS - t0)) s)"
