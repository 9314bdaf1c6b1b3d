#!/usr/bin/env bash
# geglu_gemm_keep: one staging tile per consumer (old) against two and one ring stage fewer (new), alternating;
# and 04's chapter and its GPU tests on the new file.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
t0=$SECONDS
rm -rf build
cmake --preset default > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build build -j16 --target 06_train_mlp 04_epilogue_mlp > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
cp build/06_train_mlp /tmp/new06
cp 04_epilogue_mlp/overlap.cuh /tmp/new.cuh; cp .exp/ov/overlap_old.cuh 04_epilogue_mlp/overlap.cuh
cmake --build build -j16 --target 06_train_mlp > $OUT/build_old.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build_old.log; exit 1; }
cp build/06_train_mlp /tmp/old06; cp /tmp/new.cuh 04_epilogue_mlp/overlap.cuh
echo "build ok ($((SECONDS - t0)) s)"
for r in 1 2 3; do for v in old new; do
  /tmp/${v}06 --mode epilogue --trace-dir /tmp/t_$v$r > $OUT/keep_${v}_$r.txt 2>&1
  echo "$v $r: $(grep -E 'geglu_gemm_keep_kernel \(' $OUT/keep_${v}_$r.txt | head -1) | $(grep -E 'ProfilerStep#4 ' $OUT/keep_${v}_$r.txt | tail -1)"
done; done
grep -E "check|checksum" $OUT/keep_new_1.txt | head -8; grep -E "checksum" $OUT/keep_old_1.txt
echo "($((SECONDS - t0)) s)"
