#!/usr/bin/env bash
# The maintainer's whole flow on the head, as scripts/gpu_run.sh runs it (build, every GPU and CPU test, every
# chapter under the sanitizer, the sm_80-only build, the reference traces, the benchmarks), on two H200s.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
t0=$SECONDS
mkdir -p $OUT/run
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,compute_cap,power.limit --format=csv; nproc; } > $OUT/run/machine.txt 2>&1
cat $OUT/run/machine.txt
timeout 570 bash scripts/gpu_run.sh $OUT/run > $OUT/run/gpu_run.log 2>&1; echo "gpu_run rc=$? ($((SECONDS - t0)) s)"
tail -25 $OUT/run/gpu_run.log
rm -f $OUT/run/build.log.gz; gzip -f $OUT/run/build.log $OUT/run/build80.log 2>/dev/null
cd $OUT && tar czf gpu_run.tgz run && rm -rf run; ls -la $OUT
