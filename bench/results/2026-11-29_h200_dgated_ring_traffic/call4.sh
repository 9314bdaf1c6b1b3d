#!/usr/bin/env bash
# The epilogue beside each share of the ring's traffic again, in one call, with the math warpgroups' threads meeting
# before each stage is handed back (nomain.py sync), so that the ring with nothing in it runs too; and that one
# without stores. Blog's shape only.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t; t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
python3 .exp/s6/blogonly.py
cp 06_train_mlp/dgated_gemm.cu /tmp/base.cu
rm -rf build; cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
cp build/bench/bench_train_mlp /tmp/bench_base
mk() {  # mk NAME PATCHES... (a patch p:arg runs p.py arg)
  local name=$1; shift
  cp /tmp/base.cu 06_train_mlp/dgated_gemm.cu
  for p in "$@"; do if [[ $p == *:* ]]; then python3 .exp/s6/${p%%:*}.py ${p#*:}; else python3 .exp/s6/$p.py; fi; done
  cmake --build build -j16 --target bench_train_mlp > $OUT/t/build_$name.log 2>&1 || grep -m5 error $OUT/t/build_$name.log
  cp build/bench/bench_train_mlp /tmp/bench_$name
}
python3 .exp/s6/nocheck.py
mk nomain nomain; mk sync nomain:sync; mk sync_dyw1 nomain:sync ring:dyw1; mk sync_dy nomain:sync ring:dy
mk sync_w nomain:sync ring:w; mk sync_none nomain:sync ring:none; mk sync_none_nostore nomain:sync ring:none epi:nostore
mk sync_nostore nomain:sync epi:nostore
echo "variants built ($((SECONDS - t0)) s)"
for v in base nomain sync sync_dyw1 sync_dy sync_w sync_none sync_none_nostore sync_nostore base; do
  timeout 40 /tmp/bench_$v --iters 50 >> $OUT/t/bench_$v.txt 2>&1; echo "rc=$?" >> $OUT/t/bench_$v.txt
  echo "== $v"; grep -E '^8192,768,3072 .*(\(c\) dgated|floor)|^error|^rc=[^0]' $OUT/t/bench_$v.txt | tail -2
done
echo "($((SECONDS - t0)) s)"
gzip $OUT/t/build.log; rm -f $OUT/t/configure.log
cd $OUT && tar czf t.tgz t && rm -rf t
