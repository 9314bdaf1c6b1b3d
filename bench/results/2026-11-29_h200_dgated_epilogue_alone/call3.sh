#!/usr/bin/env bash
# dh handed over a math warpgroup's half at a time (halves) against the kernel before (base), in turn; the epilogue
# alone of each (nomain); halves with eight epilogue warps; the 06 and 04 GPU tests on halves.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t; t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
rm -rf build; cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 --target bench_train_mlp 06_train_mlp_gpu_tests 04_epilogue_mlp_gpu_tests > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
cp build/bench/bench_train_mlp /tmp/bench_halves
cp 06_train_mlp/dgated_gemm.cu /tmp/new.cu; cp bench/train_mlp.cpp /tmp/bench.cpp
mk() { cmake --build build -j16 --target bench_train_mlp > $OUT/t/build_$1.log 2>&1 || grep -m5 error $OUT/t/build_$1.log; cp build/bench/bench_train_mlp /tmp/bench_$1; }
cp .exp/s5/dgated_gemm_base.cu 06_train_mlp/dgated_gemm.cu; mk base
cp /tmp/new.cu 06_train_mlp/dgated_gemm.cu; python3 .exp/s5/warps8.py; mk halves_warps8
python3 .exp/s5/nocheck.py
cp .exp/s5/dgated_gemm_base.cu 06_train_mlp/dgated_gemm.cu; python3 .exp/s5/nomain.py; mk base_nomain
cp /tmp/new.cu 06_train_mlp/dgated_gemm.cu; python3 .exp/s5/nomain.py; mk halves_nomain
cp /tmp/new.cu 06_train_mlp/dgated_gemm.cu; cp /tmp/bench.cpp bench/train_mlp.cpp
echo "variants built ($((SECONDS - t0)) s)"
for r in 1 2; do
  for v in halves base halves_warps8 halves_nomain base_nomain; do
    [ $r = 2 ] && [ $v = halves_nomain -o $v = base_nomain ] && continue
    /tmp/bench_$v --iters 50 > $OUT/t/bench_${v}_$r.txt 2>&1
    echo "== $v run $r"; grep -E '^8192,768,3072 .*(\(c\) dgated|floor)|^16384,768,3072 .*\(c\) dgated|^8192,2048,8192 .*narrow|^error' $OUT/t/bench_${v}_$r.txt
  done
done
echo "($((SECONDS - t0)) s)"
./build/chapters/06_train_mlp/06_train_mlp_gpu_tests > $OUT/t/tests06.log 2>&1; echo "06 tests rc=$?"; grep -E "PASSED|FAILED|tests ran" $OUT/t/tests06.log | head -8
./build/chapters/04_epilogue_mlp/04_epilogue_mlp_gpu_tests > $OUT/t/tests04.log 2>&1; echo "04 tests rc=$?"; grep -E "PASSED|FAILED" $OUT/t/tests04.log | head -5
echo "($((SECONDS - t0)) s)"
gzip $OUT/t/build.log; rm -f $OUT/t/configure.log
cd $OUT && tar czf t.tgz t && rm -rf t
