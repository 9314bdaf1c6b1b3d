#!/usr/bin/env bash
# The median GPU time and host time of one whole forward of each chapter, at the blog's arguments, as the chapters
# print them (GPU: CUDA events around the forward, L2 flushed before each of 50 runs; host: median of 200 calls with
# the profiler off). Needs a GPU and a build (scripts/run.sh or cmake --build --preset default). A chapter that
# fails, or whose output lacks either line, stops the table with an error (exit 1); 04's row is left out only on a GPU
# older than sm_80, where 04 says it cannot run.
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
  # A change in the chapters' output would otherwise print a blank cell.
  [ -n "$gpu" ] || { echo "error: $*: no 'GPU time per forward: N us' line in its output" >&2; exit 1; }
  [ -n "$host" ] || { echo "error: $*: no 'Host time per forward (median of N, profiler off...)' line" >&2; exit 1; }
  printf '%-62s %16s %16s\n' "$*" "$gpu" "$host"
}
row 01_matmul_add --size 64 --warmup
row 01_matmul_add --size 64 --warmup --fused
row 01_matmul_add --size 4096 --warmup
row 01_matmul_add --size 4096 --warmup --fused
row 02_linear --batch 1024 --in_dim 32 --out_dim 64
row 03_simple_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
row 03_fused_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
# 04 runs on every GPU from sm_80 on; on an older one it exits 2 saying its variant "needs compute capability 8.0".
rc=0
why=$("$b/04_epilogue_mlp" --check-only --batch 1 --seq 8 --dim 64 --hidden 64 2>&1 >/dev/null) || rc=$?
if [ $rc -eq 0 ]; then
  row 04_epilogue_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
elif [ $rc -eq 2 ] && grep -q "needs compute capability" <<<"$why"; then
  echo "04_epilogue_mlp left out: ${why#error: }" >&2
else
  echo "error: 04_epilogue_mlp --check-only exited $rc: $why" >&2
  exit 1
fi
