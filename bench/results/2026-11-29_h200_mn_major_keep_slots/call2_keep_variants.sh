#!/usr/bin/env bash
# The forward's g and u stores, two variants against the tree as it is (base): R, stored straight from the registers
# (quad transposes, 16-byte streaming stores, no staging, no waits); G, the staged TMA stores with a free k-tile
# between g's, u's and h's. Checksums of --check-only against base's at three shapes, then 06 --mode epilogue traced
# base, R, G in turn, three rounds.
set -uo pipefail
export CXX=/usr/bin/g++
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
t0=$SECONDS
tg="06_train_mlp ladder-trace 04_epilogue_mlp"
for v in base R G; do
  rm -rf /tmp/s_$v && mkdir -p /tmp/s_$v && cp -r $(ls -A | grep -v '^build\|^.exp') /tmp/s_$v/
  [ $v != base ] && cp .exp/ov2/$v/overlap.cuh /tmp/s_$v/04_epilogue_mlp/overlap.cuh
  [ -f .exp/ov2/$v/geglu_gemm_keep.cu ] && cp .exp/ov2/$v/geglu_gemm_keep.cu /tmp/s_$v/06_train_mlp/geglu_gemm_keep.cu
  ( cmake -S /tmp/s_$v -B /tmp/b_$v -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/b_$v --target $tg -j5 > $OUT/build_$v.log 2>&1 || echo "$v build failed" ) &
done
wait
echo "builds ok ($((SECONDS - t0)) s)"
for shape in "--batch 1 --seq 37 --dim 24 --hidden 80" "--batch 3 --seq 111 --dim 200 --hidden 1000" "--batch 64 --seq 128 --dim 768 --hidden 3072"; do
  for v in base R G; do echo "$v $shape: $(/tmp/b_$v/06_train_mlp $shape --mode epilogue --check-only 2>&1 | grep -E 'checksum|FAIL|rror' | tr '\n' ' ')"; done
done | tee $OUT/checks.txt
for r in 1 2 3; do
  for v in base R G; do
    rm -rf /tmp/tr && /tmp/b_$v/06_train_mlp --mode epilogue --trace-dir /tmp/tr > $OUT/epi_${v}_$r.txt 2>&1
    f=$(ls /tmp/tr/*.json | head -1); echo "== $v $r: $(/tmp/b_base/tools/ladder-trace summary --steps $f 2>&1 | grep -E 'ProfilerStep#' | tr -s ' ' | tr '\n' ';')"
    /tmp/b_base/tools/ladder-trace kernels $f 2>&1 | grep -E "keep|dgated" | sed "s/^/$v $r /"
  done
done | tee $OUT/steps.txt
echo "($((SECONDS - t0)) s)"
cd $OUT && tar czf logs.tgz build_*.log epi_*.txt && rm -f build_*.log epi_*.txt
