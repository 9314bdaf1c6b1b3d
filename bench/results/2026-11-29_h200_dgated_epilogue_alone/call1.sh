#!/usr/bin/env bash
# The backward GEMM in clusters of two blocks sharing W_down's tile (multicast) against the kernel before, in turn;
# the main loop alone of each; the dgated GPU tests and 04's on the new tree; Nsight Compute's L2 figures of both.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t; t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
rm -rf build; cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp 06_train_mlp_gpu_tests 04_epilogue_mlp_gpu_tests 06_train_mlp > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
cp build/bench/bench_train_mlp /tmp/bench_new
cp 06_train_mlp/dgated_gemm.cu /tmp/new.cu
mk() {  # mk NAME: build bench_train_mlp from the working tree's dgated_gemm.cu, copy it to /tmp/bench_NAME
  cmake --build build -j16 --target bench_train_mlp > $OUT/t/build_$1.log 2>&1 || { grep -m5 error $OUT/t/build_$1.log; }
  cp build/bench/bench_train_mlp /tmp/bench_$1
}
cp .exp/s5/dgated_gemm_base.cu 06_train_mlp/dgated_gemm.cu; mk base
python3 .exp/s5/noepi.py; mk base_noepi
cp /tmp/new.cu 06_train_mlp/dgated_gemm.cu; python3 .exp/s5/noepi.py; mk new_noepi
cp /tmp/new.cu 06_train_mlp/dgated_gemm.cu; mk new2
echo "variants built ($((SECONDS - t0)) s)"
./build/06_train_mlp/06_train_mlp_gpu_tests > $OUT/t/tests06.log 2>&1; echo "06 tests rc=$?"; grep -E "PASSED|FAILED|tests ran" $OUT/t/tests06.log | head -8
./build/04_epilogue_mlp/04_epilogue_mlp_gpu_tests > $OUT/t/tests04.log 2>&1; echo "04 tests rc=$?"; grep -E "PASSED|FAILED" $OUT/t/tests04.log | head -5
echo "($((SECONDS - t0)) s)"
for r in 1 2; do
  for v in new base new_noepi base_noepi; do
    /tmp/bench_$v --iters 50 > $OUT/t/bench_${v}_$r.txt 2>&1
    echo "== $v run $r"; grep -E '^8192,768,3072 .*(\(a\) cublas|\(c\) dgated|narrow|floor)|^16384,768,3072 .*\(c\) dgated|^8192,4096,11008 .*(\(c\) dgated|\(b\))|^8192,2048,8192 .*narrow' $OUT/t/bench_${v}_$r.txt
  done
done
echo "($((SECONDS - t0)) s)"
for v in new base; do
  timeout 150 ncu --kernel-name regex:dgated_gemm_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics lts__t_bytes.sum,lts__t_sectors_srcunit_tex.sum,smsp__cycles_active.avg /tmp/bench_$v --iters 3 > $OUT/t/ncu_$v.txt 2>&1; echo "ncu $v rc=$?"
  grep -E "Duration|L2 Cache Throughput|DRAM Throughput|Memory Throughput|lts__t_bytes.sum|SM Frequency|Compute \(SM\)|L1/TEX Cache Throughput|Max Bandwidth|L2 Hit" $OUT/t/ncu_$v.txt | head -14
done
echo "($((SECONDS - t0)) s)"
gzip $OUT/t/build.log; rm -f $OUT/t/configure.log
cd $OUT && tar czf t.tgz t && rm -rf t
