#!/usr/bin/env bash
# Compile dgated_gemm_wide.cu with wide512.py applied, as the build compiles it, with ptxas -v (no GPU needed).
# Run from the repository root of a configured build (cmake --preset default).
set -uo pipefail
python3 .exp/s6/wide512.py
cd build && cmd=$(ninja -t commands chapters/06_train_mlp/CMakeFiles/06_train_mlp_sm90a.dir/dgated_gemm_wide.cu.o | tail -1)
nvcc --version | tail -2
eval "$cmd -Xptxas -v" 2>&1 | grep -E "ptxas|error" | grep -v "^ptxas info    : Compiling"
