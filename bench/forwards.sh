#!/usr/bin/env bash
# The median GPU time and host time of one whole forward of each chapter, at the blog's arguments, as the chapters
# print them (GPU: CUDA events around the forward, L2 flushed before each of 50 runs; host: median of 200 calls with
# the profiler off). Needs a GPU and a build (scripts/run.sh or cmake --build --preset default).
#   bench/forwards.sh [build-dir]
set -euo pipefail
b=${1:-build}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
printf '%-62s %16s %16s\n' "chapter and arguments" "GPU us/forward" "host us/forward"
row() {
  local out gpu host
  out=$("$b/$1" "${@:2}" --trace-dir "$t") || { echo "error: $* failed" >&2; exit 1; }
  gpu=$(sed -n 's/^GPU time per forward: \([0-9.]*\) us.*/\1/p' <<<"$out")
  host=$(sed -n 's/^Host time per forward (median of [0-9]*, profiler off[^)]*): \([0-9.]*\) us.*/\1/p' <<<"$out")
  printf '%-62s %16s %16s\n' "$*" "$gpu" "$host"
}
row 01_matmul_add --size 64 --warmup
row 01_matmul_add --size 64 --warmup --fused
row 01_matmul_add --size 4096 --warmup
row 01_matmul_add --size 4096 --warmup --fused
row 02_linear --batch 1024 --in_dim 32 --out_dim 64
row 03_simple_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
row 03_fused_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
if "$b/04_epilogue_mlp" --check-only --batch 1 --seq 8 --dim 64 --hidden 64 >/dev/null 2>&1; then  # any GPU from sm_80 on
  row 04_epilogue_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
fi
