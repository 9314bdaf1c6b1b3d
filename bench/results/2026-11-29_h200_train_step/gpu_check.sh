#!/usr/bin/env bash
# One GPU check of the merged tree: build with torch, every GPU test, 06 under the sanitizer, the climb, the bench.
# PHASES: a space-separated list of build gpu sanitizer climb bench (default: all).
set -uo pipefail
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++  # the op library must share Python's libstdc++ (05_torch_op/README.md)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
phases=${PHASES:-build gpu sanitizer climb bench}
has() { [[ " $phases " == *" $1 "* ]]; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; python3 -c 'import torch; print("torch", torch.__version__)'; } > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt
t0=$SECONDS
if has build; then
  rm -rf build  # a fresh folder: the compiler is chosen at the first configure
  cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE=$(command -v python3) > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
  cmake --build build -j16 > $OUT/build.log 2>&1 || { grep -m10 -E "error|FAILED" $OUT/build.log; exit 1; }
  echo "build ok ($((SECONDS - t0)) s)"
fi
if has gpu; then
  LADDER_REQUIRE_GPU=1 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest_gpu.log 2>&1
  grep -E "tests passed|\*\*\*Failed|Not Run|\(Failed\)" $OUT/ctest_gpu.log | head -30; echo "($((SECONDS - t0)) s)"
  cp build/Testing/Temporary/LastTest.log $OUT/ctest_gpu_LastTest.log
  awk -f scripts/skip_reasons.awk $OUT/ctest_gpu.log build/Testing/Temporary/LastTest.log | sort -rn
fi
if has sanitizer; then
  ctest --test-dir build -L sanitizer -R 06_ > $OUT/ctest_sanitizer06.log 2>&1
  grep -E "tests passed|Failed" $OUT/ctest_sanitizer06.log | head; echo "($((SECONDS - t0)) s)"
fi
if has climb; then
  scripts/run.sh > $OUT/climb.txt 2>&1; echo "run.sh rc=$?"
  tail -8 $OUT/climb.txt; echo "($((SECONDS - t0)) s)"
fi
if has bench; then
  build/bench/bench_train_mlp --iters 50 > $OUT/bench_train_mlp.txt 2>&1; grep -E "kernel|floor|\(b\)" $OUT/bench_train_mlp.txt
fi
