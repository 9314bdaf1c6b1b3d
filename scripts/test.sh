#!/usr/bin/env bash
# Builds everything and runs every test. Without a GPU the GPU tests (ctest label `gpu`) report as skipped; on a GPU
# machine, set LADDER_REQUIRE_GPU=1 so that a skip counts as a failure.
# With the CUDA toolkit present, the CPU tests also run once more in a build with CUDA switched off (preset `nocuda`,
# in build-nocuda/), the build a reader without the toolkit gets, so that neither configuration rots.
# Its arguments go to ctest. One test, the consumer check (label `consumers`), installs HolisticTraceAnalysis, the
# TensorBoard profiler plugin, pandas and traceinsight from PyPI into build/tools/consumers/venvs/ (about 870 MB) on its first run;
# `scripts/test.sh -LE consumers` leaves it out. The last lines sum up both builds' tests, then say what did not run and
# why, one line per reason.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"  # started as `sh scripts/...`: the lines below need bash
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --build --preset default
# Chapter 05 (our kernels as PyTorch ops) is built and tested only with -DLADDER_TORCH=ON: say so when it was not.
grep -q '^LADDER_TORCH:BOOL=ON' build/CMakeCache.txt 2>/dev/null ||
  echo "05_torch_op: skipped (it needs torch >= 2.9 for CUDA 13: configure with -DLADDER_TORCH=ON, see 05_torch_op/README.md)"
[ -d build/tools/consumers/venvs ] || echo "The consumer check installs HTA, the TensorBoard profiler plugin, pandas and" \
  "traceinsight from PyPI into build/tools/consumers/venvs/ (about 870 MB) on this first run, and the Python package's test builds" \
  "its wheel in a virtualenv of its own; 'scripts/test.sh -LE \"consumers|python\"' skips both."

# run_ctest NAME LOG ARGS...: ctest with its output on the console and in LOG; the result is summed up at the end.
failed_builds=()
run_ctest() {
  local name=$1 log=$2
  shift 2
  set +e
  ctest "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  set -e
  [ "$rc" -eq 0 ] || failed_builds+=("$name")
}
# count LOG KIND: how many tests in LOG passed, failed or were skipped, from ctest's one line per test.
count() {
  local pattern
  case $2 in
    passed) pattern=' Passed +[0-9.]+ sec$' ;;
    skipped) pattern='\*\*\*Skipped +[0-9.]+ sec$' ;;
    failed) pattern='\*\*\*(Failed|Exception|Timeout|Not Run)| Not Run' ;;
  esac
  grep -E ' Test +#[0-9]+: ' "$1" | grep -cE "$pattern" || true
}

logs=(build/ctest.log)
run_ctest "build/" build/ctest.log --preset default "$@"
if grep -q '^LADDER_HAVE_CUDA:INTERNAL=ON' build/CMakeCache.txt 2>/dev/null; then
  echo
  echo "== the same CPU tests with CUDA switched off (build-nocuda/) =="
  cmake --preset nocuda >/dev/null
  cmake --build --preset nocuda
  logs+=(build-nocuda/ctest.log)
  # The consumer check reads the same trace files, and the Python package builds its own wheel: once is enough.
  run_ctest "build-nocuda/" build-nocuda/ctest.log --preset nocuda -LE 'consumers|python' "$@"
fi

echo
passed=0 failed=0 skipped=0
for log in "${logs[@]}"; do
  p=$(count "$log" passed) f=$(count "$log" failed) s=$(count "$log" skipped)
  echo "$(dirname "$log")/: $p passed, $f failed, $s skipped"
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "ladder: $passed passed, $failed failed, $skipped skipped"
# What did not run, one line per reason, read from each skipped test's output: "212 skipped: no CUDA GPU", and the
# tests this machine cannot run by name, "10 not run: needs 2 GPUs (07_tp_mlp.np2_trace_tp, ...)".
pairs=()
for log in "${logs[@]}"; do
  last=$(dirname "$log")/Testing/Temporary/LastTest.log
  [ -f "$log" ] && [ -f "$last" ] && pairs+=("$log" "$last")
done
[ ${#pairs[@]} -eq 0 ] || awk -f scripts/skip_reasons.awk "${pairs[@]}" | sort -rn
[ ${#failed_builds[@]} -eq 0 ]
