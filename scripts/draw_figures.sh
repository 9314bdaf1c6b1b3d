#!/usr/bin/env bash
# Redraws every README picture from the committed traces: one `ladder-trace svg` line per picture.
#   scripts/draw_figures.sh [LADDER_TRACE] [OUT_ROOT]
# LADDER_TRACE defaults to build/tools/ladder-trace; OUT_ROOT (default: the repository) is where <chapter>/figures/
# go, so the ctest docs.figures_up_to_date can draw into a temporary folder and compare.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lt=${1:-$root/build/tools/ladder-trace}
out=${2:-$root}
cd "$root"
r=traces/reference/h100
mkdir -p "$out"/{01_matmul_add,02_linear,03_simple_mlp,03_fused_mlp,04_epilogue_mlp,05_torch_op,06_train_mlp}/figures "$out"/docs/figures
"$lt" svg $r/03_fused_mlp.json -o "$out"/docs/figures/03_fused_mlp_step.svg
"$lt" svg $r/01_matmul_add_size64.json -o "$out"/01_matmul_add/figures/size64_step.svg
"$lt" svg $r/01_matmul_add_size4096.json -o "$out"/01_matmul_add/figures/size4096_step.svg
"$lt" svg $r/01_matmul_add_size64.json --focus matmul_add -o "$out"/01_matmul_add/figures/size64_matmul_add.svg
"$lt" svg $r/02_linear.json -o "$out"/02_linear/figures/step.svg
"$lt" svg $r/02_linear.json --focus aten::linear -o "$out"/02_linear/figures/aten_linear.svg
"$lt" svg $r/02_linear_graph.json -o "$out"/02_linear/figures/graph_step.svg
"$lt" svg $r/03_simple_mlp.json -o "$out"/03_simple_mlp/figures/step.svg
"$lt" svg $r/03_simple_mlp.json --focus mlp_fwd -o "$out"/03_simple_mlp/figures/mlp_fwd.svg
"$lt" svg $r/03_fused_mlp.json -o "$out"/03_fused_mlp/figures/step.svg
"$lt" svg $r/03_fused_mlp.json --focus mlp_fwd -o "$out"/03_fused_mlp/figures/mlp_fwd.svg
"$lt" svg $r/03_fused_mlp_graph.json -o "$out"/03_fused_mlp/figures/graph_step.svg
"$lt" svg $r/04_epilogue_mlp.json -o "$out"/04_epilogue_mlp/figures/step.svg
"$lt" svg $r/04_epilogue_mlp.json --focus mlp_fwd -o "$out"/04_epilogue_mlp/figures/mlp_fwd.svg
"$lt" svg $r/02_linear_graph.json --focus linear_fwd -o "$out"/02_linear/figures/graph_linear_fwd.svg
"$lt" svg $r/05_ladder.json -o "$out"/05_torch_op/figures/ladder_step.svg
"$lt" svg $r/05_compile.json -o "$out"/05_torch_op/figures/compile_step.svg
mkdir -p "$out"/07_tp_mlp/figures
o=$r/07_tp_mlp_overlap_b64_s128_d768_h3072_np2
"$lt" svg $o/rank0.1795711882725893602.pt.trace.json -o "$out"/07_tp_mlp/figures/overlap_rank0.svg
"$lt" svg $o/rank1.1795711882725893602.pt.trace.json -o "$out"/07_tp_mlp/figures/overlap_rank1.svg
"$lt" svg $o --step 4 -o "$out"/07_tp_mlp/figures/overlap_ranks.svg
"$lt" svg $r/07_tp_mlp_tp_b64_s128_d768_h3072_np2 --step 4 -o "$out"/07_tp_mlp/figures/tp_ranks.svg
"$lt" svg $r/07_tp_mlp_tp_b64_s128_d768_h3072_np4 --step 4 -o "$out"/07_tp_mlp/figures/tp_ranks_np4.svg
"$lt" svg $r/07_tp_mlp_overlap_b64_s128_d768_h3072_np4 --step 4 -o "$out"/07_tp_mlp/figures/overlap_ranks_np4.svg
"$lt" svg $r/07_tp_mlp_overlap_b64_s128_d768_h3072_np4_window_ncclsms32 --step 4 \
  -o "$out"/07_tp_mlp/figures/overlap_ranks_np4_window.svg
"$lt" svg $r/07_tp_mlp_overlap_b256_s128_d768_h3072_np4_window_ncclsms32 --step 4 \
  -o "$out"/07_tp_mlp/figures/overlap_ranks_np4_window_b256.svg
"$lt" svg $r/06_train_mlp_eager.json --step 4 --width 1200 -o "$out"/06_train_mlp/figures/step_eager.svg
for mode in eager fused epilogue recompute; do
  "$lt" svg $r/06_train_mlp_$mode.json --step 4 --memory --width 900 -o "$out"/06_train_mlp/figures/memory_$mode.svg
done
python3 scripts/draw_mma_curve.py bench/results/2026-11-26_h100_portable/mma_curve.txt \
  bench/results/2026-11-26_h100_portable_tuning/bench_call3_v6_after.txt "$out"/04_epilogue_mlp/figures/mma_curve.svg
