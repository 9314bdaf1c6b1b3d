#!/usr/bin/env bash
# The L2 flush as committed (one kernel reads twice the L2) against the memset it replaced, side by side on one GPU:
# the benches built twice from the same tree, the second with GpuTimer::flush() patched back to the memset.
set -uo pipefail
t0=$SECONDS
mkdir -p /tmp/src && tar xzf .exp/s15/head.tgz -C /tmp/src && cd /tmp/src  # the tree of commit 8224774 (git archive)
mkdir -p $OUT/t
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; } > $OUT/t/gpu.txt 2>&1; cat $OUT/t/gpu.txt
cmake --preset default > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
targets="bench_train_mlp bench_elementwise bench_epilogue_mlp chapter_gpu_tests"
cmake --build build --target $targets > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
LADDER_REQUIRE_GPU=1 ctest --test-dir build -R "GpuTimer" --output-on-failure > $OUT/t/ctest_timer.log 2>&1; grep -E "tests passed|Failed|Passed" $OUT/t/ctest_timer.log
mkdir -p /tmp/read /tmp/memset && cp build/bench/bench_train_mlp build/bench/bench_elementwise build/bench/bench_epilogue_mlp /tmp/read/
cp common/chapter/gpu_timer.cpp /tmp/gpu_timer.cpp.kept
sed -i 's|^void GpuTimer::flush() const { read_through_l2(flush_, sink_, current_stream()); }|void GpuTimer::flush() const { CUDA_CHECK(cudaMemsetAsync(flush_.data, 0, flush_bytes(), current_stream())); }|' common/chapter/gpu_timer.cpp
grep -n "void GpuTimer::flush" common/chapter/gpu_timer.cpp | tee $OUT/t/memset_patch.txt
cmake --build build --target $targets >> $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
cp build/bench/bench_train_mlp build/bench/bench_elementwise build/bench/bench_epilogue_mlp /tmp/memset/; cp /tmp/gpu_timer.cpp.kept common/chapter/gpu_timer.cpp
echo "build ok ($((SECONDS - t0)) s)"
for i in 1 2; do
  for f in read memset; do
    timeout 100 /tmp/$f/bench_train_mlp > $OUT/t/train_${f}_$i.txt 2>&1; echo "train $f $i rc=$? ($((SECONDS - t0)) s)"
    grep -E "^8192,768,3072 .*(\((a|b|c)\) |alone|copy of|floor)" $OUT/t/train_${f}_$i.txt | cut -c1-120
  done
done
for f in read memset; do
  timeout 100 /tmp/$f/bench_elementwise > $OUT/t/elementwise_$f.txt 2>&1; echo "elementwise $f rc=$? ($((SECONDS - t0)) s)"
  grep -E "GiB|cudaMemcpyAsync|gelu_mul " $OUT/t/elementwise_$f.txt | head -8 | cut -c1-120
done
for f in read memset; do
  timeout 120 /tmp/$f/bench_epilogue_mlp > $OUT/t/epilogue_$f.txt 2>&1; echo "epilogue $f rc=$? ($((SECONDS - t0)) s)"
done
rm -f $OUT/t/configure.log $OUT/t/build.log
cd $OUT && tar czf call2.tgz t && rm -rf t; echo "($((SECONDS - t0)) s)"
