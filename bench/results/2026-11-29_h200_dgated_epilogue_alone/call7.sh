#!/usr/bin/env bash
# Is the epilogue slow by itself, or beside the main loop's loads? The kernel as it is; with no wgmma (nomain); with
# no wgmma and no loads of dy or W_down (nomain_noring: the epilogue alone, nothing else); the same without stores;
# the whole kernel with no loads of dy or W_down (noring: wgmma on whatever the stages hold). In turn, one call.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t; t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
rm -rf build; cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
python3 .exp/s5/nocheck.py
cmake --build build -j16 --target bench_train_mlp > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
cp build/bench/bench_train_mlp /tmp/bench_base
cp 06_train_mlp/dgated_gemm.cu /tmp/base.cu
mk() {  # mk NAME PATCHES...
  local name=$1; shift
  cp /tmp/base.cu 06_train_mlp/dgated_gemm.cu
  for p in "$@"; do if [ $p = nostore ]; then python3 .exp/s5/epi.py nostore; else python3 .exp/s5/$p.py; fi; done
  cmake --build build -j16 --target bench_train_mlp > $OUT/t/build_$name.log 2>&1 || grep -m5 error $OUT/t/build_$name.log
  cp build/bench/bench_train_mlp /tmp/bench_$name
}
mk nomain nomain; mk nomain_noring nomain noring; mk nomain_noring_nostore nomain noring nostore; mk noring noring
cp /tmp/base.cu 06_train_mlp/dgated_gemm.cu; git checkout bench/train_mlp.cpp
echo "variants built ($((SECONDS - t0)) s)"
for v in base nomain nomain_noring nomain_noring_nostore noring base; do
  /tmp/bench_$v --iters 50 >> $OUT/t/bench_$v.txt 2>&1
  echo "== $v"; grep -E '^8192,768,3072 .*(\(c\) dgated|floor)|^error' $OUT/t/bench_$v.txt | tail -2
done
echo "($((SECONDS - t0)) s)"
gzip $OUT/t/build.log; rm -f $OUT/t/configure.log
cd $OUT && tar czf t.tgz t && rm -rf t
