#!/usr/bin/env bash
# The kernel each of cuBLASLt's algorithms runs for the step's GEMMs (Nsight Compute names it), shape by shape.
cd .exp/s8 && nvcc -O2 -arch=sm_90a -o algos algos.cu -lcublasLt || exit 1
for s in 0 1 2 3 4; do for a in 0 1 2 3 4 5 6 7; do
  n=$(ncu --metrics gpu__time_duration.sum ./algos $s $a 2>/dev/null | grep -E "^  [A-Za-z_]" | grep -v "==PROF==" | head -1 | sed 's/ (.*//;s/^ *//')
  echo "shape $s algo $a: $n"
done; done | tee $OUT/algo_kernels.txt
