#!/usr/bin/env bash
# Why do kernels overlap on one stream in 03_fused_mlp's graph trace? On a GPU machine, from the repository root:
#     tools/consumers/gpu_overlap_probe.sh OUTDIR
# prints the CUDA graph's kernel nodes with their programmatic dependent launch (PDL) attributes and edge types
# (graph_pdl_probe), records the chapter eager and replayed from a graph with 20 active steps, and lists every kernel
# that starts before the previous one on its stream ends (overlaps.py).
set -euo pipefail
out=${1:?usage: $0 OUTDIR}
b=${BUILD_DIR:-build-consumers}
mkdir -p "$out"
cmake -S . -B "$b" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DBUILD_TESTING=OFF > /dev/null
ninja -C "$b" graph_pdl_probe 03_fused_mlp > /dev/null
"$b/tools/consumers/graph_pdl_probe" | tee "$out/graph_pdl_probe.txt"
"$b/03_fused_mlp" --graph --active 20 --trace-dir "$out" > "$out/fused_graph.log"
"$b/03_fused_mlp" --active 20 --trace-dir "$out" > "$out/fused_eager.log"
python3 tools/consumers/overlaps.py "$out"/*.json | tee "$out/overlaps.txt"
