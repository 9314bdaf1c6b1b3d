#!/usr/bin/env bash
# 192 x 128 tiles (three math warpgroups, three g/u slots, three 40 KB stages) against the kernel before, in turn;
# the epilogue alone (nomain) and the main loop alone (noepi) of the new one; the 06 GPU tests on it; Nsight Compute's
# L2 figures of both at the GPU's own clocks.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t; t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
rm -rf build; cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp 06_train_mlp_gpu_tests > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
cp build/bench/bench_train_mlp /tmp/bench_t192
cp 06_train_mlp/dgated_gemm.cu /tmp/t192.cu
mk() {  # mk NAME SOURCE PATCHES...
  local name=$1 src=$2; shift 2
  cp $src 06_train_mlp/dgated_gemm.cu
  for p in "$@"; do python3 .exp/s5/$p.py; done
  cmake --build build -j16 --target bench_train_mlp > $OUT/t/build_$name.log 2>&1 || grep -m5 error $OUT/t/build_$name.log
  cp build/bench/bench_train_mlp /tmp/bench_$name
}
mk base .exp/s5/dgated_gemm_base.cu
python3 .exp/s5/nocheck.py
mk t192_nomain /tmp/t192.cu nomain; mk t192_noepi /tmp/t192.cu noepi
cp /tmp/t192.cu 06_train_mlp/dgated_gemm.cu; git checkout bench/train_mlp.cpp
echo "variants built ($((SECONDS - t0)) s)"
./build/chapters/06_train_mlp/06_train_mlp_gpu_tests > $OUT/t/tests06_t192.log 2>&1; echo "06 tests (t192) rc=$?"; grep -E "PASSED|FAILED|tests ran" $OUT/t/tests06_t192.log | head -8
for v in t192 base t192 base t192_nomain t192_noepi; do
  /tmp/bench_$v --iters 50 >> $OUT/t/bench_$v.txt 2>&1
  echo "== $v"; tail -n +1 $OUT/t/bench_$v.txt | grep -E '^8192,768,3072 .*(\(c\) dgated|floor)|^16384,768,3072 .*\(c\) dgated|^8192,2048,8192 .*narrow|^error' | tail -4
done
echo "($((SECONDS - t0)) s)"
for v in t192 base; do
  timeout 100 ncu --clock-control none --kernel-name regex:dgated_gemm_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics lts__t_bytes.sum /tmp/bench_$v --iters 3 > $OUT/t/ncu_$v.txt 2>&1; echo "ncu $v rc=$?"
  grep -E "Duration|L2 Cache Throughput|DRAM Throughput|lts__t_bytes.sum|SM Frequency|Compute \(SM\)|L1/TEX Cache Throughput" $OUT/t/ncu_$v.txt | head -8
done
echo "($((SECONDS - t0)) s)"
gzip $OUT/t/build.log; rm -f $OUT/t/configure.log
cd $OUT && tar czf t.tgz t && rm -rf t
