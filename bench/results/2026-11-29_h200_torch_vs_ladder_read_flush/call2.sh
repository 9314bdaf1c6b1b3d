#!/usr/bin/env bash
# bench/torch_vs_ladder.py on one H200, its kernels timed after a flush that reads: the blog's PyTorch models next to chapters 01-04, built as the README builds them.
set -uo pipefail
export PYTHONUNBUFFERED=1
t0=$SECONDS
mkdir -p $OUT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; python3 -c "import torch; print('torch', torch.__version__)"; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
cmake --preset default > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
cmake --build build --target 01_matmul_add 02_linear 03_simple_mlp 03_fused_mlp 04_epilogue_mlp > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
timeout $((560 - SECONDS + t0)) python3 bench/torch_vs_ladder.py --build build --out $OUT/torch_vs_ladder.md > $OUT/torch_vs_ladder.log 2>&1; echo "rc=$? ($((SECONDS - t0)) s)"
tail -5 $OUT/torch_vs_ladder.log
rm -f $OUT/configure.log $OUT/build.log
