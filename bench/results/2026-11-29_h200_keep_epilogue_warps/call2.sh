#!/usr/bin/env bash
# The training forward with epilogue warps (keep_warps.cu) against geglu_gemm_keep as it is: both in one build,
# picked by KEEP_WARPS. KEEP_COMPARE=1 runs both kernels on the same inputs and counts differing bits of h, g and u.
# Then 06 --mode epilogue traced, base and warps in turn, three rounds.
set -uo pipefail
export CXX=/usr/bin/g++
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
t0=$SECONDS
cp .exp/s9/geglu_gemm_keep_exp.cu 06_train_mlp/geglu_gemm_keep.cu
cp .exp/s9/keep_warps.cu 06_train_mlp/keep_warps.cu
sed -i 's/SM90A_KERNELS dgated_gemm.cu dgated_gemm_wide.cu geglu_gemm_keep.cu/SM90A_KERNELS dgated_gemm.cu dgated_gemm_wide.cu geglu_gemm_keep.cu keep_warps.cu/' 06_train_mlp/CMakeLists.txt
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/configure.log 2>&1
cmake --build /tmp/b --target 06_train_mlp ladder-trace -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
for shape in "--batch 1 --seq 37 --dim 24 --hidden 80" "--batch 3 --seq 111 --dim 200 --hidden 1000" "--batch 7 --seq 301 --dim 768 --hidden 3072" "--batch 2 --seq 5 --dim 136 --hidden 8" "--batch 64 --seq 128 --dim 768 --hidden 3072"; do
  for v in 1; do
    KEEP_COMPARE=1 KEEP_WARPS=$v timeout 120 /tmp/b/06_train_mlp $shape --mode epilogue --check-only > /tmp/o.txt 2>&1; rc=$?; echo "rc $rc"; [ $rc = 124 ] && { echo HANG; exit 3; }
    echo "warps=$v $shape: $(grep -E 'checksum|FAIL|rror|check ' /tmp/o.txt | tr -s ' ' | tr '\n' ' ')"
    grep KEEP_COMPARE /tmp/o.txt | sort | uniq -c
  done
done 2>&1 | tee $OUT/checks.txt; grep -q HANG $OUT/checks.txt && exit 3
echo "checks done ($((SECONDS - t0)) s)"
for r in 1 2 3; do
  for v in 0 1; do
    rm -rf /tmp/tr && KEEP_WARPS=$v timeout 60 /tmp/b/06_train_mlp --mode epilogue --trace-dir /tmp/tr > $OUT/epi_${v}_$r.txt 2>&1
    f=$(ls /tmp/tr/*.json | head -1); echo "== warps=$v round $r: $(/tmp/b/tools/ladder-trace summary --steps $f 2>&1 | grep -E 'ProfilerStep#' | tr -s ' ' | tr '\n' ';')"
    /tmp/b/tools/ladder-trace kernels $f 2>&1 | grep -E "keep|dgated" | tr -s ' ' | sed "s/^/warps=$v $r /"
  done
done | tee $OUT/steps.txt
echo "($((SECONDS - t0)) s)"
cd $OUT && tar czf logs.tgz build.log configure.log epi_*.txt && rm -f build.log configure.log epi_*.txt
