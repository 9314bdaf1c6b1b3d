#!/usr/bin/env bash
# Diagnosis of dgated_gemm on this GPU: per-tile timeline (instrumented copy) and Nsight Compute on the kept kernel.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/machine.txt
cfg() { cmake -S $1 -B $1/build-b -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/cfg-$2.log 2>&1 && cmake --build $1/build-b --target bench_train_mlp -j8 > $OUT/build-$2.log 2>&1 || { echo "build $2 failed"; grep -m8 -B2 -A3 error $OUT/build-$2.log; }; }
rm -rf /tmp/tl && mkdir /tmp/tl && cp -r . /tmp/tl/ 2>/dev/null; rm -rf /tmp/tl/build* ; cp .exp/diag/dgated_gemm_tl.cu /tmp/tl/06_train_mlp/dgated_gemm.cu
cfg . kept & cfg /tmp/tl tl & wait
echo "== timeline"
/tmp/tl/build-b/bench/bench_train_mlp --iters 10 > $OUT/tl_bench.txt 2>&1
grep -E "kernel|floor" $OUT/tl_bench.txt
for s in "M=8192 hidden=3072" "M=16384 hidden=3072" "M=8192 hidden=11008"; do grep "TL $s" $OUT/tl_bench.txt | tail -3; done
echo "== ncu"
timeout 300 ncu --set full -k regex:dgated_gemm_kernel -s 3 -c 1 build-b/bench/bench_train_mlp --iters 1 > $OUT/ncu_kept.txt 2>&1; echo "ncu rc=$?"
grep -E "DRAM Throughput|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Duration|Compute \(SM\)|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Shared Memory|Bank" $OUT/ncu_kept.txt | head -40
cd $OUT && tar czf diag.tgz *.txt && rm -f cfg-*.log
