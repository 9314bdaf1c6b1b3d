#!/usr/bin/env bash
# LadderGEGLUMLP's backward GEMM after the GPU idled on Python, and with the GPU kept busy before the backward.
set -uo pipefail
export CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
nvidia-smi -L
t0=$SECONDS
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > /dev/null 2>&1 && cmake --build build --target ladder_torch_ops -j16 > $OUT/build.log 2>&1 || { grep -m5 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
LADDER_TORCH_LIB=build/chapters/05_torch_op/libladder_torch_ops.so PYTHONPATH=$PWD/05_torch_op python3 .exp/s1/gap.py 2>&1 | grep -v -i warn | tee $OUT/gap.txt
echo "($((SECONDS - t0)) s)"
