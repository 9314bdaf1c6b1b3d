#!/usr/bin/env bash
# Clusters of two sharing W_down's tile by multicast (mc), with each stage handed back as soon as its wgmma are done
# (wait0: one more stage in flight), against the kernel before with and without wait0; the main loop alone (noepi) of
# each; the 06 GPU tests on mc_wait0.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t; t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
rm -rf build; cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp 06_train_mlp_gpu_tests > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
cp build/bench/bench_train_mlp /tmp/bench_mc
cp 06_train_mlp/dgated_gemm.cu /tmp/mc.cu
mk() {  # mk NAME SOURCE PATCHES...
  local name=$1 src=$2; shift 2
  cp $src 06_train_mlp/dgated_gemm.cu
  for p in "$@"; do python3 .exp/s5/$p.py; done
  cmake --build build -j16 --target bench_train_mlp > $OUT/t/build_$name.log 2>&1 || grep -m5 error $OUT/t/build_$name.log
  cp build/bench/bench_train_mlp /tmp/bench_$name
}
mk base .exp/s5/dgated_gemm_base.cu; mk base_wait0 .exp/s5/dgated_gemm_base.cu wait0; mk mc_wait0 /tmp/mc.cu wait0
cmake --build build -j16 --target 06_train_mlp_gpu_tests > $OUT/t/build_tests.log 2>&1 || grep -m5 error $OUT/t/build_tests.log
python3 .exp/s5/nocheck.py
mk mc_wait0_noepi /tmp/mc.cu wait0 noepi; mk base_noepi .exp/s5/dgated_gemm_base.cu noepi; mk base_wait0_noepi .exp/s5/dgated_gemm_base.cu wait0 noepi
cp /tmp/mc.cu 06_train_mlp/dgated_gemm.cu; git checkout bench/train_mlp.cpp
echo "variants built ($((SECONDS - t0)) s)"
for v in mc_wait0 base base_wait0 mc mc_wait0_noepi base_noepi base_wait0_noepi; do
  /tmp/bench_$v --iters 50 > $OUT/t/bench_$v.txt 2>&1
  echo "== $v"; grep -E '^8192,768,3072 .*(\(c\) dgated|floor)|^16384,768,3072 .*\(c\) dgated|^error' $OUT/t/bench_$v.txt
done
echo "($((SECONDS - t0)) s)"
./build/chapters/06_train_mlp/06_train_mlp_gpu_tests > $OUT/t/tests06_mc_wait0.log 2>&1; echo "06 tests (mc_wait0) rc=$?"; grep -E "PASSED|FAILED|tests ran" $OUT/t/tests06_mc_wait0.log | head -8
echo "($((SECONDS - t0)) s)"
gzip $OUT/t/build.log; rm -f $OUT/t/configure.log
cd $OUT && tar czf t.tgz t && rm -rf t
