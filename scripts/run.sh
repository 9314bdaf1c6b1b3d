#!/usr/bin/env bash
# Builds the ladder and climbs it: each chapter with the blog's arguments, each writing its trace under traces/.
# On a machine without a GPU it says so and prints, for each chapter, the summary of the trace we recorded on an H100
# (traces/reference/h100/), so the ladder can be followed from a laptop.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"  # started as `sh scripts/...`: the lines below need bash
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# What the climb runs, and no more: the chapters (with the CUDA toolkit) and ladder-trace. scripts/test.sh builds the
# tests and the benchmarks too.
targets=(ladder-trace)
if grep -q '^LADDER_HAVE_CUDA:INTERNAL=ON' build/CMakeCache.txt 2>/dev/null; then
  targets+=(01_matmul_add 02_linear 03_simple_mlp 03_fused_mlp 04_epilogue_mlp)
fi
cmake --build --preset default --target "${targets[@]}"

b=build
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo
  echo "No NVIDIA GPU was found on this machine, so here are the summaries of the reference traces recorded on an H100."
  echo "README.md, \"The tables in the terminal\", says what each column means."
  for t in 01_matmul_add_size64 01_matmul_add_size4096 02_linear 03_simple_mlp 03_fused_mlp 04_epilogue_mlp; do
    echo
    echo "==== traces/reference/h100/$t.json ===="
    "$b/tools/ladder-trace" summary "traces/reference/h100/$t.json"
  done
  exit 0
fi

run() { echo; echo "==== $* ===="; "$@"; }
run "$b/01_matmul_add" --size 64 --warmup
run "$b/01_matmul_add" --size 4096 --warmup
run "$b/02_linear" --batch 1024 --in_dim 32 --out_dim 64
run "$b/03_simple_mlp" --batch 64 --seq 128 --dim 768 --hidden 3072
run "$b/03_fused_mlp" --batch 64 --seq 128 --dim 768 --hidden 3072
# Rung 04 runs its wgmma kernel on an H100 and its mma.sync one on any other GPU from sm_80 on; an older GPU says so
# and exits 2, which ends the climb without failing it.
run "$b/04_epilogue_mlp" --batch 64 --seq 128 --dim 768 --hidden 3072 || [ $? -eq 2 ]
