#!/usr/bin/env bash
# LadderGEGLUMLP's dx as one GEMM on torch.cat of the two weights (new) against two GEMMs (old, the tree before):
# torch_train_step.py --modes compile,ladder,ladder_compile with each, alternately, twice; 05's GPU tests (pytest) with
# the faster; then 06's four modes and PyTorch's seven steps recorded with it (.exp/fin/call_record.sh).
set -uo pipefail
export CXX=/usr/bin/g++ PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
nvidia-smi -L
t0=$SECONDS
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > /dev/null 2>&1 && cmake --build build -j16 > $OUT/build.log 2>&1 || { grep -m5 -E "error|FAILED" $OUT/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
export LADDER_TORCH_LIB=$PWD/build/chapters/05_torch_op/libladder_torch_ops.so
for r in 1 2; do
  for v in old new; do
    cp .exp/s1/${v}_init.py 05_torch_op/ladder_ops/__init__.py
    rm -rf /tmp/ab && mkdir /tmp/ab
    PYTHONPATH=/tmp/site:$PWD/05_torch_op python3 06_train_mlp/torch_train_step.py --out /tmp/ab --modes compile,ladder,ladder_compile 2>&1 | grep "GPU busy" | sed "s/^/$v $r /" | cut -c1-60 | tee -a $OUT/ab.txt
    for m in compile ladder ladder_compile; do echo "$v $r $m $(build/tools/ladder-trace summary --steps /tmp/ab/torch_06_train_mlp_$m.json | grep ProfilerStep# | tr -s ' ' | cut -d' ' -f5 | tr '\n' ' ')"; done | tee -a $OUT/ab.txt
  done
done
cp .exp/s1/new_init.py 05_torch_op/ladder_ops/__init__.py
echo "($((SECONDS - t0)) s)"
LADDER_REQUIRE_GPU=1 ctest --test-dir build -R 05_torch_op.gpu_tests > $OUT/ctest_05.log 2>&1; grep -E "tests passed|Failed" $OUT/ctest_05.log
bash .exp/fin/call_record.sh
