#!/usr/bin/env bash
# torch_train_step.py with the AOTAutograd cache off, in turn with the tree before (old: the Python backward, dx two
# GEMMs) twice, old first, one shared Inductor cache folder (as call 3, where old's cached backward ran for new); then
# 06's four modes and PyTorch's seven steps recorded.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/t
t0=$SECONDS
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/t/configure.log 2>&1 || { tail -5 $OUT/t/configure.log; exit 1; }
cmake --build build -j16 > $OUT/t/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/t/build.log; exit 1; }
echo "build ok ($((SECONDS - t0)) s)"
for r in 1 2; do
  for v in old new; do
    p=05_torch_op; [ $v = old ] && p=.exp/s4/old
    rm -rf /tmp/ab_$v
    LADDER_TORCH_LIB=build/chapters/05_torch_op/libladder_torch_ops.so PYTHONPATH=$p python3 06_train_mlp/torch_train_step.py \
      --out /tmp/ab_$v --modes compile,ladder,ladder_compile 2>&1 | grep -E "GPU busy" | sed "s/^/$v $r /" | cut -c1-70
    echo "$v $r ladder_compile kernels a step: $(build/tools/ladder-trace summary --steps /tmp/ab_$v/torch_06_train_mlp_ladder_compile.json | grep -E 'ProfilerStep#' | tr -s ' ' | cut -d' ' -f3 | tr '\n' ' ')"
  done
done | tee $OUT/t/steps_ab.txt
echo "($((SECONDS - t0)) s)"
rm -f $OUT/t/configure.log; gzip $OUT/t/build.log
cd $OUT && tar czf tests.tgz t && rm -rf t && cd - > /dev/null
bash .exp/fin/call_record.sh > $OUT/record_out.txt 2>&1; grep -E "^ladder|^compile|^eager|^liger|rc=" $OUT/record_out.txt | cut -c1-100
grep -A4 -E "06_train_mlp_epilogue.json|torch_06_train_mlp_(compile|ladder|ladder_compile).json" $OUT/steps.txt | grep -E "==|Profiler"
echo "($((SECONDS - t0)) s)"
