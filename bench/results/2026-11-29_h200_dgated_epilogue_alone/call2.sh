#!/usr/bin/env bash
# Why the clustered kernel is slower: its grid and occupancy (Nsight Compute's launch statistics); the same clusters
# without multicast; the main loop alone of the clustered kernel and of the kernel before; the GPU tests on the
# clustered kernel.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t; t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
rm -rf build; cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp 06_train_mlp_gpu_tests 04_epilogue_mlp_gpu_tests > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
cp build/bench/bench_train_mlp /tmp/bench_new
cp 06_train_mlp/dgated_gemm.cu /tmp/new.cu; cp bench/train_mlp.cpp /tmp/bench.cpp
mk() { cmake --build build -j16 --target bench_train_mlp > $OUT/t/build_$1.log 2>&1 || grep -m5 error $OUT/t/build_$1.log; cp build/bench/bench_train_mlp /tmp/bench_$1; }
cp .exp/s5/dgated_gemm_base.cu 06_train_mlp/dgated_gemm.cu; mk base
cp /tmp/new.cu 06_train_mlp/dgated_gemm.cu; python3 .exp/s5/nomc.py; mk nomc
python3 .exp/s5/nocheck.py
cp .exp/s5/dgated_gemm_base.cu 06_train_mlp/dgated_gemm.cu; python3 .exp/s5/noepi.py; mk base_noepi
cp /tmp/new.cu 06_train_mlp/dgated_gemm.cu; python3 .exp/s5/noepi.py; mk new_noepi
cp /tmp/new.cu 06_train_mlp/dgated_gemm.cu; cp /tmp/bench.cpp bench/train_mlp.cpp
echo "variants built ($((SECONDS - t0)) s)"
timeout 120 ncu --kernel-name regex:dgated_gemm_kernel --launch-skip 2 --launch-count 1 --section LaunchStats --section Occupancy --section SpeedOfLight /tmp/bench_new --iters 3 > $OUT/t/ncu_new.txt 2>&1; echo "ncu rc=$?"
grep -E "Grid Size|Cluster|Block Size|Waves|Duration|Registers|Theoretical Occ|Achieved Occ" $OUT/t/ncu_new.txt | head -16
for v in new nomc base new_noepi base_noepi; do
  /tmp/bench_$v --iters 50 > $OUT/t/bench_${v}.txt 2>&1
  echo "== $v"; grep -E '^8192,768,3072 .*(\(c\) dgated|floor)|^error' $OUT/t/bench_${v}.txt
done
echo "($((SECONDS - t0)) s)"
./build/chapters/06_train_mlp/06_train_mlp_gpu_tests > $OUT/t/tests06.log 2>&1; echo "06 tests rc=$?"; grep -E "PASSED|FAILED|tests ran" $OUT/t/tests06.log | head -8
./build/chapters/04_epilogue_mlp/04_epilogue_mlp_gpu_tests > $OUT/t/tests04.log 2>&1; echo "04 tests rc=$?"; grep -E "PASSED|FAILED" $OUT/t/tests04.log | head -5
echo "($((SECONDS - t0)) s)"
gzip $OUT/t/build.log; rm -f $OUT/t/configure.log
cd $OUT && tar czf t.tgz t && rm -rf t
