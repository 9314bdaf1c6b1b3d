#!/usr/bin/env bash
# torch.compile's gelu*mul after a memset flush, a read flush and none, in two processes (two compiles).
set -uo pipefail
mkdir -p $OUT
nvidia-smi -L > $OUT/gpu.txt; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv >> $OUT/gpu.txt
for p in 1 2; do TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 timeout 150 python3 .exp/s15/tflush.py $p 2>&1 | grep -v Warning; done | tee $OUT/tflush.txt
