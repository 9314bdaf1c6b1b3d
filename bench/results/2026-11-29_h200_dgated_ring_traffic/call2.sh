#!/usr/bin/env bash
# What the main loop and the epilogue wait on. The epilogue beside the ring (nomain) with all of its loads, with dy's
# only, with W_down's only, and with W_down shared by multicast in clusters of two (mc_cta); the main loop alone
# (noepi) with and without the staging of dh, the 128 x 256 kernel's main loop alone; Nsight Compute (the GPU's own
# clocks) on the kernel, the clustered one and both main loops. Blog's shape only.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t; t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
python3 .exp/s6/blogonly.py
git apply bench/results/2026-11-29_h200_dgated_epilogue_alone/cluster_multicast.patch || exit 1
python3 .exp/s6/ctascope.py
cp 06_train_mlp/dgated_gemm.cu /tmp/mc.cu; git show HEAD:06_train_mlp/dgated_gemm.cu > /tmp/base.cu
cp 06_train_mlp/dgated_gemm_wide.cu /tmp/wide.cu
rm -rf build; cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
cp build/bench/bench_train_mlp /tmp/bench_mc_cta
mk() {  # mk NAME SOURCE PATCHES... (a patch p:arg runs p.py arg)
  local name=$1 src=$2; shift 2
  cp $src 06_train_mlp/dgated_gemm.cu; cp /tmp/wide.cu 06_train_mlp/dgated_gemm_wide.cu
  for p in "$@"; do if [[ $p == *:* ]]; then python3 .exp/s6/${p%%:*}.py ${p#*:}; else python3 .exp/s6/$p.py; fi; done
  cmake --build build -j16 --target bench_train_mlp > $OUT/t/build_$name.log 2>&1 || grep -m5 error $OUT/t/build_$name.log
  cp build/bench/bench_train_mlp /tmp/bench_$name
}
mk base /tmp/base.cu
python3 .exp/s6/nocheck.py
mk base_nomain /tmp/base.cu nomain; mk base_nomain_dy /tmp/base.cu nomain ring:dy; mk base_nomain_w /tmp/base.cu nomain ring:w
mk mc_cta_nomain /tmp/mc.cu nomain; mk base_noepi /tmp/base.cu noepi; mk mc_cta_noepi /tmp/mc.cu noepi
mk base_noepi_nostage /tmp/base.cu noepi nostage; mk wide_noepi /tmp/base.cu wide_noepi
echo "variants built ($((SECONDS - t0)) s)"
for v in base base_nomain base_nomain_dy base_nomain_w mc_cta_nomain base_noepi mc_cta_noepi base_noepi_nostage mc_cta wide_noepi base; do
  timeout 60 /tmp/bench_$v --iters 50 >> $OUT/t/bench_$v.txt 2>&1; echo "rc=$?" >> $OUT/t/bench_$v.txt
  echo "== $v"; grep -E '^8192,768,3072 .*(\(c\) dgated|\(c\) wide|floor)|^error|^rc=[^0]' $OUT/t/bench_$v.txt | tail -3
done
echo "($((SECONDS - t0)) s)"
for v in base mc_cta base_noepi mc_cta_noepi; do
  timeout 100 ncu --clock-control none --kernel-name regex:dgated_gemm_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --metrics lts__t_bytes.sum /tmp/bench_$v --iters 3 > $OUT/t/ncu_$v.txt 2>&1; echo "ncu $v rc=$?"
  grep -E "Duration|L2 Cache Throughput|DRAM Throughput|lts__t_bytes.sum|Compute \(SM\)|L1/TEX Cache Throughput|Shared Memory|Issue Slots Busy" $OUT/t/ncu_$v.txt | head -10
done
echo "($((SECONDS - t0)) s)"
gzip $OUT/t/build.log; rm -f $OUT/t/configure.log
cd $OUT && tar czf t.tgz t && rm -rf t
