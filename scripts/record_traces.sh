#!/usr/bin/env bash
# Records the reference traces: every chapter with the arguments traces/README.md lists, each trace renamed to its
# reference name, with everything the chapter printed beside it (.txt), plus machine.txt. Needs a GPU and a build.
#
#   scripts/record_traces.sh OUT_DIR [BUILD_DIR]      e.g. scripts/record_traces.sh traces/reference/h100 build
set -euo pipefail
out=${1:?usage: scripts/record_traces.sh OUT_DIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out/runs-without-warmup"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# record NAME CHAPTER ARGS...: runs the chapter with its trace going to a fresh folder, keeps the one trace it wrote.
record() {
  local name=$1 chapter=$2
  shift 2
  rm -rf "$tmp/run" && mkdir -p "$tmp/run"
  echo "== $name: $chapter $*"
  "$build/$chapter" "$@" --trace-dir "$tmp/run" > "$out/$name.txt" 2>&1 || { cat "$out/$name.txt"; exit 1; }
  mv "$tmp"/run/*.json "$out/$name.json"
}

record 01_matmul_add_size64 01_matmul_add --size 64 --warmup
record 01_matmul_add_size64_fused 01_matmul_add --size 64 --warmup --fused
record 01_matmul_add_size4096 01_matmul_add --size 4096 --warmup
record 01_matmul_add_size4096_fused 01_matmul_add --size 4096 --warmup --fused
record 01_matmul_add_size64_cold 01_matmul_add --size 64 --wait 0 --warmup-steps 0
record runs-without-warmup/01_matmul_add_size64 01_matmul_add --size 64
record runs-without-warmup/01_matmul_add_size4096 01_matmul_add --size 4096
record 02_linear 02_linear --batch 1024 --in_dim 32 --out_dim 64
record 02_linear_graph 02_linear --batch 1024 --in_dim 32 --out_dim 64 --graph
record 03_simple_mlp 03_simple_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
record 03_fused_mlp 03_fused_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
record 03_fused_mlp_graph 03_fused_mlp --batch 64 --seq 128 --dim 768 --hidden 3072 --graph
if [ -x "$build/04_epilogue_mlp" ]; then
  record 04_epilogue_mlp 04_epilogue_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
fi

{
  nvidia-smi -L
  nvidia-smi --query-gpu=driver_version --format=csv
  date -u
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>/dev/null || true
} > "$out/machine.txt"
echo "recorded into $out"
