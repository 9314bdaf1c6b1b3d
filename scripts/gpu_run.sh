#!/usr/bin/env bash
# On a GPU machine, what a maintainer runs before committing traces or figures: build everything, run every GPU test
# with LADDER_REQUIRE_GPU=1 (a skipped test fails), record the reference traces, and run the benchmarks. Everything
# goes to OUT (logs, traces, tables), and the last lines say what passed. Exits 1 if any step failed.
#
#   scripts/gpu_run.sh OUT [--quick]      (--quick: tests and traces only, no benchmarks)
set -uo pipefail
usage="usage: scripts/gpu_run.sh OUT [--quick]"
if [ $# -lt 1 ] || [ -z "$1" ] || [ $# -gt 2 ]; then echo "$usage" >&2; exit 2; fi
if [ $# -eq 2 ] && [ "$2" != --quick ]; then echo "error: unknown argument '$2' ($usage)" >&2; exit 2; fi
quick=${2:-}
case $1 in /*) out=$1 ;; *) out=$PWD/$1 ;; esac  # OUT relative to where we were called, before the cd below
cd "$(dirname "$0")/.."
mkdir -p "$out"
summary=()
failed=0
step() {  # step NAME LOG COMMAND...: runs the command with its output in OUT/LOG, notes pass or fail
  local name=$1 log=$2
  shift 2
  echo "== $name"
  if "$@" > "$out/$log" 2>&1; then
    summary+=("ok    $name")
  else
    summary+=("FAIL  $name (see $log)")
    failed=1
    tail -20 "$out/$log"
  fi
}

step configure configure.log cmake --preset default
step build build.log cmake --build --preset default
export LADDER_REQUIRE_GPU=1
step "ctest -L gpu" ctest_gpu.log ctest --preset default -L gpu -j 4
step "ctest -L cpu" ctest_cpu.log ctest --preset default -L cpu -j 8
# Every chapter under compute-sanitizer's memcheck, racecheck and synccheck (one at a time: each owns the GPU).
step "ctest -L sanitizer" ctest_sanitizer.log ctest --preset default -L sanitizer
# Chapter 04 with no Hopper code at all: a build for sm_80 only, whose chapter runs the portable variant (natively on an
# sm_80-89 GPU, through its compute_80 PTX on a newer one), checked against 03_fused_mlp's checksum. pipefail in the
# steps below: a program that crashes after printing its checksum fails the step, not just a missing line.
step "sm_80-only build" build80.log bash -c 'cmake -S . -B build-sm80 -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=80 && cmake --build build-sm80 --target 04_epilogue_mlp 03_fused_mlp 06_train_mlp'
step "sm_80-only 04 = 03_fused" same80.log bash -c 'set -o pipefail
  args="--batch 3 --seq 5 --dim 64 --hidden 200 --seed 1 --check-only"
  a=$(build-sm80/03_fused_mlp $args | grep checksum) && b=$(build-sm80/04_epilogue_mlp $args | grep checksum) &&
  echo "03_fused: $a; 04 (portable, PTX): $b" && [ "$a" = "$b" ]'
# Chapter 06's recompute without the Hopper backward GEMM (what it runs off sm_90: two GEMMs, gelu_mul and fused's
# backward): dg and du must still be eager's bits.
step "sm_80-only 06 recompute = eager" same80_06.log bash -c 'set -o pipefail
  for args in "--batch 3 --seq 5 --dim 64 --hidden 200" "--batch 64 --seq 128 --dim 768 --hidden 3072"; do
    a=$(build-sm80/06_train_mlp $args --check-only --mode eager | grep checksum) &&
    b=$(build-sm80/06_train_mlp $args --check-only --mode recompute | grep checksum) &&
    echo "$args: eager $a; recompute (portable) $b" && [ "$a" = "$b" ] || exit 1
  done'

step "reference traces" record.log scripts/record_traces.sh "$out/reference" build
if [ "$quick" != "--quick" ]; then
  step "bench/forwards.sh" forwards.txt bench/forwards.sh build
  step bench_elementwise bench_elementwise.txt build/bench/bench_elementwise
  step bench_epilogue_mlp bench_epilogue_mlp.txt build/bench/bench_epilogue_mlp
  # Chapter 06's backward GEMM is wgmma and TMA: its benchmark runs where chapters.txt's "sm90" entries run.
  source scripts/chapters.sh && source scripts/can_run.sh && machine_facts build
  why=$(why_not cuda,sm90 bench_train_mlp)
  if [ -z "$why" ]; then step bench_train_mlp bench_train_mlp.txt build/bench/bench_train_mlp
  else summary+=("skip  bench_train_mlp ($why)"); fi
fi
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } > "$out/gpu.txt" 2>&1
echo
grep -h "tests passed" "$out"/ctest_*.log
printf '%s\n' "${summary[@]}"
exit $failed
