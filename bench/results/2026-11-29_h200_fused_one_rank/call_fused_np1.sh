#!/usr/bin/env bash
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi -L
cmake -S . -B build90 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build build90 --target 07_tp_mlp ladder-trace -j16 > $OUT/build.log 2>&1 || { grep -m20 error $OUT/build.log; exit 1; }
for b in 64 256; do
  mpirun --oversubscribe -np 1 build90/07_tp_mlp --batch $b --seq 128 --dim 768 --hidden 3072 --mode fused --trace-dir $OUT/t > $OUT/fused_np1_b$b.txt 2>&1; echo "b$b rc=$?"
  grep -E "check \(|differ|checksums|^  (one GPU|sp|fused)|ncclLadder" $OUT/fused_np1_b$b.txt
done
d=$(ls -d $OUT/t/*b64*); cp $d/rank0.*.json $OUT/fused_np1_b64_rank0.json; cp $d/rank0.txt $OUT/fused_np1_b64_rank0.txt
build90/tools/ladder-trace kernels $OUT/fused_np1_b64_rank0.json | head -8
rm -rf $OUT/t
