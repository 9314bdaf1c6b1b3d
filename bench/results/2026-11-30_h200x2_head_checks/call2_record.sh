#!/usr/bin/env bash
# One call: 06's four modes (scripts/record_traces.sh over chapters.txt's 06 lines), then PyTorch's seven training
# steps, into one folder; ladder-trace summary --steps of them all. Builds first if the machine is fresh.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/05_torch_op
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export CXX=/usr/bin/g++
t0=$SECONDS
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; python3 -c 'import torch; print("torch", torch.__version__)'; python3 -c 'import importlib.metadata as m; print("liger-kernel", m.version("liger-kernel"))'; } > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
if [ ! -x build/tools/ladder-trace ] || [ ! -f build/chapters/05_torch_op/libladder_torch_ops.so ]; then
  rm -rf build; cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > /dev/null 2>&1 && cmake --build build -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
fi
echo "build ok ($((SECONDS - t0)) s)"
ref=$OUT/h200; mkdir -p $ref
LADDER_CHAPTERS=$PWD/bench/results/2026-11-30_h200x2_head_checks/call2_chapters06.txt scripts/record_traces.sh $ref build > $OUT/record.log 2>&1; echo "record rc=$? ($((SECONDS - t0)) s)"
LADDER_TORCH_LIB=build/chapters/05_torch_op/libladder_torch_ops.so python3 06_train_mlp/torch_train_step.py --out $ref \
  --modes eager,compile,ladder,ladder_compile,ladder_recompute,liger,liger_compile > $OUT/torch_train_step.txt 2>&1; echo "torch rc=$? ($((SECONDS - t0)) s)"
grep -v -i "warn" $OUT/torch_train_step.txt | tail -9
{ for f in $ref/06_train_mlp_*.json $ref/torch_06_*.json; do echo "== $(basename $f)"; build/tools/ladder-trace summary --steps $f 2>&1 | grep -E "ProfilerStep#|step "; done; } > $OUT/steps.txt
grep -E "^==|ProfilerStep#" $OUT/steps.txt
cd $OUT && tar czf h200.tgz h200 && rm -rf h200; echo "($((SECONDS - t0)) s)"
