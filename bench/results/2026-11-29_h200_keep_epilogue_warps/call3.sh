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
for shape in "--batch 3 --seq 111 --dim 200 --hidden 1000" "--batch 64 --seq 128 --dim 768 --hidden 3072"; do
  KEEP_FLAGS=4 KEEP_COMPARE=1 KEEP_WARPS=1 timeout 60 /tmp/b/06_train_mlp $shape --mode epilogue --check-only 2>&1 | grep -E "KEEP_COMPARE|FAIL|rror" | sort | uniq -c
done | tee $OUT/checks3.txt
for r in 1 2 3; do
  for v in old 0 1 2 3 4; do
    w=1; [ $v = old ] && w=0
    rm -rf /tmp/tr && KEEP_FLAGS=$v KEEP_WARPS=$w timeout 60 /tmp/b/06_train_mlp --mode epilogue --trace-dir /tmp/tr > /dev/null 2>&1
    f=$(ls /tmp/tr/*.json | head -1)
    echo "flags=$v round $r: $(/tmp/b/tools/ladder-trace kernels $f 2>&1 | grep -E "keep" | tr -s ' ' | cut -d' ' -f2,5,6)"
  done
done | tee $OUT/steps3.txt
echo "($((SECONDS - t0)) s)"
