#!/usr/bin/env bash
# Clusters of two sharing W_down's tile by multicast: the remote arrive at cluster scope (mc, as the patch has it)
# against the default CTA scope (mc_cta); the main loop alone (noepi) and the epilogue beside the ring alone (nomain)
# of each, against the kernel before. Blog's shape only.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t; t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
python3 .exp/s6/blogonly.py
git apply bench/results/2026-11-29_h200_dgated_epilogue_alone/cluster_multicast.patch || exit 1
cp 06_train_mlp/dgated_gemm.cu /tmp/mc.cu; git show HEAD:06_train_mlp/dgated_gemm.cu > /tmp/base.cu
rm -rf build; cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp 06_train_mlp_gpu_tests > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
cp build/bench/bench_train_mlp /tmp/bench_mc
mk() {  # mk NAME SOURCE PATCHES...
  local name=$1 src=$2; shift 2
  cp $src 06_train_mlp/dgated_gemm.cu
  for p in "$@"; do python3 .exp/s6/$p.py; done
  cmake --build build -j16 --target bench_train_mlp > $OUT/t/build_$name.log 2>&1 || grep -m5 error $OUT/t/build_$name.log
  cp build/bench/bench_train_mlp /tmp/bench_$name
}
mk base /tmp/base.cu
python3 .exp/s6/ctascope.py
mk mc_cta /tmp/mc.cu; mk mc_cta_wait0 /tmp/mc.cu wait0
cp /tmp/mc.cu 06_train_mlp/dgated_gemm.cu
cmake --build build -j16 --target 06_train_mlp_gpu_tests > $OUT/t/build_tests.log 2>&1 || grep -m5 error $OUT/t/build_tests.log
python3 .exp/s6/nocheck.py
mk mc_cta_noepi /tmp/mc.cu noepi; mk mc_cta_nomain /tmp/mc.cu nomain; mk base_noepi /tmp/base.cu noepi; mk base_nomain /tmp/base.cu nomain
echo "variants built ($((SECONDS - t0)) s)"
for v in base mc mc_cta mc_cta_wait0 base_noepi mc_cta_noepi base_nomain mc_cta_nomain base; do
  timeout 60 /tmp/bench_$v --iters 50 >> $OUT/t/bench_$v.txt 2>&1; echo "rc=$?" >> $OUT/t/bench_$v.txt
  echo "== $v"; grep -E '^8192,768,3072 .*(\(c\) dgated|floor)|^error|^rc=[^0]' $OUT/t/bench_$v.txt | tail -3
done
echo "($((SECONDS - t0)) s)"
timeout 90 ./build/chapters/06_train_mlp/06_train_mlp_gpu_tests > $OUT/t/tests06_mc_cta.log 2>&1; echo "06 tests (mc_cta) rc=$?"; grep -E "PASSED|FAILED|tests ran" $OUT/t/tests06_mc_cta.log | head -8
echo "($((SECONDS - t0)) s)"
gzip $OUT/t/build.log; rm -f $OUT/t/configure.log
cd $OUT && tar czf t.tgz t && rm -rf t
