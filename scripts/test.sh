#!/usr/bin/env bash
# Builds everything and runs every test. Without a GPU the GPU tests (ctest label `gpu`) report as skipped; on a GPU
# machine, set LADDER_REQUIRE_GPU=1 so that a skip counts as a failure.
# With the CUDA toolkit present, the CPU tests also run once more in a build with CUDA switched off (preset `nocuda`,
# in build-nocuda/), the build a reader without the toolkit gets, so that neither configuration rots.
# Its arguments go to ctest. One test, the consumer check (label `consumers`), installs HolisticTraceAnalysis, the
# TensorBoard profiler plugin and pandas from PyPI into build/tools/consumers/venvs/ (581 MB) on its first run;
# `scripts/test.sh -LE consumers` leaves it out.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"  # started as `sh scripts/...`: the lines below need bash
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --build --preset default
# Chapter 05 (our kernels as PyTorch ops) is built and tested only with -DLADDER_TORCH=ON: say so when it was not.
grep -q '^LADDER_TORCH:BOOL=ON' build/CMakeCache.txt 2>/dev/null ||
  echo "05_torch_op: skipped (it needs torch >= 2.9 for CUDA 13: configure with -DLADDER_TORCH=ON, see 05_torch_op/README.md)"
ctest --preset default "$@"
if grep -q '^LADDER_HAVE_CUDA:INTERNAL=ON' build/CMakeCache.txt 2>/dev/null; then
  echo
  echo "== the same CPU tests with CUDA switched off (build-nocuda/) =="
  cmake --preset nocuda >/dev/null
  cmake --build --preset nocuda
  # The consumer check reads the same trace files, and the Python package builds its own wheel: once is enough.
  ctest --preset nocuda -LE 'consumers|python' "$@"
fi
