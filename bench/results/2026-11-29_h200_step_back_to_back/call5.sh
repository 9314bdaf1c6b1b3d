#!/usr/bin/env bash
# A test that cannot fail is a defect: on this machine's copy only, ladder::geglu_mlp_backward never finds the weights
# stacked (dx always two GEMMs); 05's GPU tests must then fail in test_training_makes_dx_with_one_gemm.
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
nvidia-smi -L
sed -i 's|  return w_gate.sizes() == w_up.sizes() \&\& w_gate.is_contiguous()|  return false \&\& w_gate.sizes() == w_up.sizes() \&\& w_gate.is_contiguous()|' 06_train_mlp/torch_ops.cpp
grep -n "return false &&" 06_train_mlp/torch_ops.cpp || exit 1
rm -rf build
cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > /dev/null 2>&1 || exit 1
cmake --build build -j16 --target ladder_torch_ops > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
cd build/../05_torch_op/tests && LADDER_REQUIRE_GPU=1 LADDER_TORCH_LIB=$OLDPWD/build/chapters/05_torch_op/libladder_torch_ops.so PYTHONPATH=$OLDPWD/05_torch_op \
  python3 -m unittest test_gpu_autograd > $OUT/broken_05_gpu.log 2>&1; echo "rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^FAILED|^OK|AssertionError" $OUT/broken_05_gpu.log | head -12
