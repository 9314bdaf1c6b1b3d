#!/usr/bin/env bash
# Where rank 1 waits when rank 0 throws at the start of "forwards": abort() and sync() print when they start and end.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
python3 - <<'PY'
p='07_tp_mlp/nccl_comm.cpp'; s=open(p).read()
s=s.replace('  if (comm_ && !aborted_.exchange(true)) ncclCommAbort(comm_);',
 '  fprintf(stderr, "[rank %d] abort: start (in_call %d)\\n", rank_, int(in_call_)); if (comm_ && !aborted_.exchange(true)) ncclCommAbort(comm_); fprintf(stderr, "[rank %d] abort: done\\n", rank_);')
s=s.replace('void Communicator::sync() const {\n', 'void Communicator::sync() const {\n  fprintf(stderr, "[rank %d] sync: start\\n", rank_);\n')
s=s.replace('ncclResult_t Communicator::call(const std::function<ncclResult_t()>& nccl) const {\n', 'ncclResult_t Communicator::call(const std::function<ncclResult_t()>& nccl) const {\n  fprintf(stderr, "[rank %d] call\\n", rank_);\n')
open(p,'w').write(s)
PY
grep -c fprintf 07_tp_mlp/nccl_comm.cpp
cmake --preset default > /dev/null 2>&1 && cmake --build build -j32 --target 07_tp_mlp > $OUT/build.log 2>&1 || { grep -m5 error $OUT/build.log; exit 1; }
s=$SECONDS; LADDER_07_FAULT=forwards:0:throw NCCL_DEBUG=WARN timeout 60 mpirun -np 2 build/07_tp_mlp --check-only --timeout 5 --batch 3 --seq 5 --dim 64 --hidden 208 2>&1 | while IFS= read -r l; do printf '%s %s\n' "$(date +%S.%N | cut -c1-6)" "$l"; done > $OUT/fault.txt
echo "$((SECONDS - s)) s"; grep -v "^\s*$" $OUT/fault.txt | grep -v "^---" | head -40
