#!/usr/bin/env bash
# PyTorch's training step in one process: kernels with the GPU waiting on Python (synced) against back to back
# (queued); LadderGEGLUMLP's dx as one GEMM (stacked) against two (apart), eager and compiled; torch.compile beside.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
if [ ! -f build/chapters/05_torch_op/libladder_torch_ops.so ]; then
  rm -rf build
  cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > /dev/null 2>&1 || exit 1
  cmake --build build -j16 --target ladder_torch_ops > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
fi
echo "build ok ($((SECONDS - t0)) s)"
LADDER_TORCH_LIB=build/chapters/05_torch_op/libladder_torch_ops.so PYTHONPATH=05_torch_op python3 .exp/s4/gaps.py 2>&1 | grep -v -i warn | tee $OUT/gaps.txt
echo "($((SECONDS - t0)) s)"
