#!/usr/bin/env bash
# The mutant of final_tests.sh, its sed fixed: the MN-major descriptor with no panel stride (LBO 0), against the
# DgatedGemm tests.
set -uo pipefail
export CXX=/usr/bin/g++
nvidia-smi -L
rm -rf /tmp/m && mkdir /tmp/m && cp -r $(ls -A | grep -v '^build\|^.exp') /tmp/m/
sed -i "s/sw128_mnmajor_desc(b_tile + kk \* 16 \* 128, kBK \* 128);/sw128_mnmajor_desc(b_tile + kk * 16 * 128, 0); \/* MUTANT *\//" /tmp/m/common/hopper/pipeline.cuh
grep -n MUTANT /tmp/m/common/hopper/pipeline.cuh
cmake -S /tmp/m -B /tmp/m/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1 && cmake --build /tmp/m/b --target 06_train_mlp_gpu_tests -j16 > $OUT/build-mutant.log 2>&1 || { grep -m5 error $OUT/build-mutant.log; exit 1; }
/tmp/m/b/chapters/06_train_mlp/06_train_mlp_gpu_tests --gtest_filter='DgatedGemm.*' > $OUT/mutant_tests.log 2>&1; echo "mutant rc=$?"
grep -E "FAILED|PASSED|differ|within|Failure" $OUT/mutant_tests.log | head -8
