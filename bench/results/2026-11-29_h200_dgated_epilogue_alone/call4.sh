#!/usr/bin/env bash
# What the epilogue alone waits on: the kernel with no wgmma (nomain) as it is, without its stores, without its
# arithmetic, without both, and with eleven epilogue warps; the whole kernel as it is, without its arithmetic, and
# with eleven epilogue warps. All in one call, in turn.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t; t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
rm -rf build; cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
cp build/bench/bench_train_mlp /tmp/bench_base; cp /tmp/bench_base /tmp/bench_base2
cp 06_train_mlp/dgated_gemm.cu /tmp/base.cu
python3 .exp/s5/nocheck.py
mk() {  # mk NAME PATCHES...: the kernel of the tree with the patches, bench_train_mlp built as /tmp/bench_NAME
  local name=$1; shift
  cp /tmp/base.cu 06_train_mlp/dgated_gemm.cu
  for p in "$@"; do if [ $p = nomain ]; then python3 .exp/s5/nomain.py; else python3 .exp/s5/epi.py $p; fi; done
  cmake --build build -j16 --target bench_train_mlp > $OUT/t/build_$name.log 2>&1 || grep -m5 error $OUT/t/build_$name.log
  cp build/bench/bench_train_mlp /tmp/bench_$name
}
mk nomain nomain; mk nomain_nostore nomain nostore; mk nomain_noarith nomain noarith; mk nomain_noarith_nostore nomain noarith nostore
mk nomain_warps11 nomain warps11; mk warps11 warps11; mk noarith noarith
cp /tmp/base.cu 06_train_mlp/dgated_gemm.cu; git checkout bench/train_mlp.cpp
echo "variants built ($((SECONDS - t0)) s)"
for v in base nomain nomain_nostore nomain_noarith nomain_noarith_nostore nomain_warps11 warps11 noarith base2; do
  /tmp/bench_$v --iters 50 > $OUT/t/bench_$v.txt 2>&1
  echo "== $v"; grep -E '^8192,768,3072 .*(\(c\) dgated|floor)|^error' $OUT/t/bench_$v.txt
done
echo "($((SECONDS - t0)) s)"
gzip $OUT/t/build.log; rm -f $OUT/t/configure.log
cd $OUT && tar czf t.tgz t && rm -rf t
