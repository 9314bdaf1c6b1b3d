#!/usr/bin/env bash
# The head on two H200s: scripts/gpu_run.sh (build, every GPU, CPU and sanitizer test, the sm_80-only build, the
# reference traces, the benchmarks), then 07_tp_mlp/torch_tp.py on both GPUs.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
t0=$SECONDS
mkdir -p $OUT/run
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,compute_cap,power.limit --format=csv; nproc; } > $OUT/run/machine.txt 2>&1
cat $OUT/run/machine.txt
timeout 500 bash scripts/gpu_run.sh $OUT/run > $OUT/run/gpu_run.log 2>&1; echo "gpu_run rc=$? ($((SECONDS - t0)) s)"
tail -22 $OUT/run/gpu_run.log
awk -f scripts/skip_reasons.awk $OUT/run/ctest_gpu.log build/Testing/Temporary/LastTest.log 2>/dev/null | sort -rn > $OUT/run/not_run.txt; head -5 $OUT/run/not_run.txt | cut -c1-120
grep -E "^8192,768,3072 .*\((a|b|c)\)|floor|^8192,4096,11008 .*\((b|c)\)" $OUT/run/bench_train_mlp.txt | cut -c1-150 | head -12
left=$((580 - SECONDS + t0))
if [ $left -gt 30 ]; then
  timeout $left torchrun --nproc-per-node 2 07_tp_mlp/torch_tp.py --out /tmp/tp > $OUT/run/torch_tp.txt 2>&1; echo "torch_tp rc=$? ($((SECONDS - t0)) s)"
  tail -8 $OUT/run/torch_tp.txt | cut -c1-140
fi
gzip -f $OUT/run/build.log $OUT/run/build80.log 2>/dev/null
rm -rf $OUT/run/reference
cd $OUT && tar czf call1.tgz run && rm -rf run; ls -la $OUT
