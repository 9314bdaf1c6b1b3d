#!/usr/bin/env bash
# Where rank 1 waits when rank 0 throws at the start of "forwards": its threads' stacks, 8 s in (--timeout 30).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
command -v gdb eu-stack
cmake --preset default > /dev/null 2>&1 && cmake --build build -j32 --target 07_tp_mlp > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
LADDER_07_FAULT=forwards:0:throw timeout 60 mpirun -np 2 build/07_tp_mlp --check-only --timeout 30 --batch 3 --seq 5 --dim 64 --hidden 208 > $OUT/fault.txt 2>&1 &
sleep 10
for pid in $(pgrep -f "build/07_tp_mlp --check-only"); do
  [ "$(cat /proc/$pid/comm)" = 07_tp_mlp ] || continue
  echo "== pid $pid"
  gdb -p $pid -batch -ex "thread apply all bt 25" 2>/dev/null | grep -E "^Thread|^#" | grep -v "^#.* in ?? " > $OUT/bt_$pid.txt
  grep -E "^Thread|nccl|ch07|cuda|Run::|stage" $OUT/bt_$pid.txt | head -60
done
wait
cat $OUT/fault.txt | grep error
