#!/usr/bin/env bash
# The keep kernel's staging-free wait moved from the end of a tile's main loop into g's step (after the next tile's
# first k-tile is issued), with u's step after k-tile U and the chunks from k-tile C: variants W_U_C; base is the tree
# (2, 4, the wait at the end). Checksums at two shapes, then 06 --mode epilogue traced in turn, three rounds.
set -uo pipefail
export CXX=/usr/bin/g++
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
t0=$SECONDS
VARS=${VARS:-"base W_2_4 W_2_3 W_1_3"}
for v in $VARS; do
  rm -rf /tmp/s_$v && mkdir -p /tmp/s_$v && cp -r $(ls -A | grep -v '^build\|^.exp') /tmp/s_$v/
  if [ $v != base ]; then
    IFS=_ read W U C <<< "$v"
    sed -e "s/KEEP_U_SLOT/$U/g; s/KEEP_C_SLOT/$C/g" .exp/ov3/overlap.cuh > /tmp/s_$v/04_epilogue_mlp/overlap.cuh
  fi
  tg=06_train_mlp; [ $v = base ] && tg="06_train_mlp ladder-trace"
  ( cmake -S /tmp/s_$v -B /tmp/b_$v -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/b_$v --target $tg -j4 > $OUT/build_$v.log 2>&1 || echo "$v build failed" ) &
done
wait
echo "builds ok ($((SECONDS - t0)) s)"
for shape in "--batch 3 --seq 111 --dim 200 --hidden 1000" "--batch 64 --seq 128 --dim 768 --hidden 3072"; do
  for v in $VARS; do echo "$v $shape: $(/tmp/b_$v/06_train_mlp $shape --mode epilogue --check-only 2>&1 | grep -E 'checksum|FAIL|rror' | tr '\n' ' ')"; done
done > $OUT/checks.txt; grep -o "^[^:]*: .*checksum: [0-9a-fx]*" $OUT/checks.txt | sed 's/: .*checksum//'
for r in 1 2 3; do
  for v in $VARS; do
    rm -rf /tmp/tr && /tmp/b_$v/06_train_mlp --mode epilogue --trace-dir /tmp/tr > /dev/null 2>&1
    f=$(ls /tmp/tr/*.json | head -1); echo "== $v $r: $(/tmp/b_base/tools/ladder-trace summary --steps $f 2>&1 | grep -E 'ProfilerStep#' | tr -s ' ' | cut -d' ' -f2,5 | tr '\n' ';')  $(/tmp/b_base/tools/ladder-trace kernels $f 2>&1 | grep -E "keep" | tr -s " " | cut -d" " -f6)"
  done
done | tee $OUT/steps.txt
echo "($((SECONDS - t0)) s)"
cd $OUT && tar czf logs.tgz build_*.log && rm -f build_*.log
