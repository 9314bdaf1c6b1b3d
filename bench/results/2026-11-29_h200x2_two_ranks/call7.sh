#!/usr/bin/env bash
# Two H200s: every 07 GPU test (the two-GPU ones and the fault runs on real ranks), the allocator's two-device test,
# and 07's forwards side by side (fused, sp, overlap, tp) at the blog's shape and 4x its batch, with rank traces.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; nvidia-smi topo -m; } > $OUT/gpu.txt 2>&1
head -3 $OUT/gpu.txt
t0=$SECONDS
rm -rf build
cmake --preset default > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build build -j32 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 timeout 400 ctest --test-dir build -L gpu -R "07_tp_mlp|CachingAllocator|SumSlots|PeerSlots" --output-on-failure -V > $OUT/ctest07.log 2>&1
grep -E "tests passed|\*\*\*Failed|\(Failed\)|Timeout|Not Run|Skipped" $OUT/ctest07.log | head -20; echo "($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 timeout 100 ctest --test-dir build -L two_gpus > $OUT/ctest_two_gpus.log 2>&1
grep -E "tests passed" $OUT/ctest_two_gpus.log; echo "($((SECONDS - t0)) s)"
mkdir -p $OUT/tr
for b in 64 256; do
  NCCL_DEBUG=WARN timeout 120 mpirun -np 2 build/07_tp_mlp --batch $b --seq 128 --dim 768 --hidden 3072 --mode fused --trace-dir $OUT/tr > $OUT/fused_b$b.txt 2>&1; echo "fused b$b rc=$?"
  grep -E "differ|^ +(one GPU|tp|overlap|sp|fused)" $OUT/fused_b$b.txt
  timeout 120 mpirun -np 2 build/07_tp_mlp --batch $b --seq 128 --dim 768 --hidden 3072 --mode sp --trace-dir $OUT/tr > $OUT/sp_b$b.txt 2>&1; echo "sp b$b rc=$?"
  grep -E "^ +(sp|fused)" $OUT/sp_b$b.txt
  echo "($((SECONDS - t0)) s)"
done
for f in forwards:1:stall forwards:0:throw nccl-init:1:exit; do
  s=$SECONDS; LADDER_07_FAULT=$f timeout 60 mpirun -np 2 build/07_tp_mlp --check-only --timeout 5 --batch 3 --seq 5 --dim 64 --hidden 208 > $OUT/fault_${f//:/_}.txt 2>&1
  echo "fault $f rc=$? $((SECONDS - s)) s"; grep -E "error|stage" $OUT/fault_${f//:/_}.txt | head -4
done
cd $OUT && tar czf traces.tgz tr && rm -rf tr && mkdir logs && mv *.log fault_*.txt sp_*.txt fused_*.txt logs/ && tar czf logs.tgz logs && rm -rf logs
ls $OUT
