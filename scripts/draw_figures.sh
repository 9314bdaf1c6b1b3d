#!/usr/bin/env bash
# Redraws every README picture from the committed traces: the chapters' from the `figure` lines of chapters.txt, one
# `ladder-trace svg` each.
#   scripts/draw_figures.sh [LADDER_TRACE] [OUT_ROOT]
# LADDER_TRACE defaults to build/tools/ladder-trace; OUT_ROOT (default: the repository) is where <chapter>/figures/
# go, so the ctest docs.figures_up_to_date can draw into a temporary folder and compare.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lt=${1:-$root/build/tools/ladder-trace}
out=${2:-$root}
cd "$root"
source scripts/chapters.sh
r=traces/reference
mkdir -p "$out"/docs/figures
"$lt" svg $r/h100/03_fused_mlp.json -o "$out"/docs/figures/03_fused_mlp_step.svg
# The chapters' pictures: the `figure` lines of chapters.txt, each `ladder-trace svg` of a committed trace.
figures=$(chapters_entries figure)
while IFS='|' read -r chapter needs name target launch rest; do
  read -ra words <<< "$rest"
  mkdir -p "$out/$chapter/figures"
  "$lt" svg "$r/${words[0]}" "${words[@]:1}" -o "$out/$chapter/figures/$name" < /dev/null
done <<< "$figures"
# 04's curve of the mma.sync kernel's throughput is drawn from a benchmark's table, not from a trace.
python3 scripts/draw_mma_curve.py bench/results/2026-11-26_h100_portable/mma_curve.txt \
  bench/results/2026-11-26_h100_portable_tuning/bench_call3_v6_after.txt "$out"/04_epilogue_mlp/figures/mma_curve.svg
