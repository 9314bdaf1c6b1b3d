#!/usr/bin/env bash
# Builds common/gpu/tests/gpu_allocator_test.cpp (the tree's current one) twice and runs it on the GPU:
#   against the tree's current allocator          -> $OUT/new_allocator_test.log
#   against the allocator of e4aefe4^ (old/)      -> $OUT/old_allocator_test.log
# old/allocator.{h,cpp} are old/pristine/ (git show e4aefe4^:common/gpu/allocator.{h,cpp}) plus only what today's test
# and memory.cpp need to compile, with the old behaviour (record_stream does nothing; the swappable cudaFree is the one
# release_cached calls and ignores); $OUT/old_allocator_shim.diff shows exactly that.
# Then two broken copies of the current allocator, each built and run the same way, to show that the tests which cannot
# fail against the old allocator (it had no such code) do fail when that code is broken:
#   release_cached ignores what cudaFree returns           -> $OUT/mutant_cudafree_ignored.log
#   release_cached leaves the blocks waiting for a stream  -> $OUT/mutant_pending_kept.log
# $OUT/summary.txt: each test's verdict in each build.
#
# Run from the repository root:  OUT=/some/folder bash bench/results/2026-11-29_h200_fused_one_rank/old_allocator/run.sh
# Needs nvcc 13, cmake, ninja, GoogleTest, fmt (what the repository's own build needs) and a GPU. The tree is copied to
# $WORK (default: a new folder under /tmp), so the checkout and its build/ are not touched. One configure, one full
# build of the test target (gpu_gpu_tests and the libraries it links, nothing else), then only the allocator's objects
# and the test binary are rebuilt for each variant. CUDA_ARCHS (default 90) is passed as CMAKE_CUDA_ARCHITECTURES.
# WORK may be reused for another run of the same tree (sources keep their times; see the touch below).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${ROOT:-$(cd "$here/../.." && pwd)}  # ROOT: another checkout of the repository
: "${OUT:?set OUT to the folder for the logs}"
mkdir -p "$OUT"
work=${WORK:-$(mktemp -d /tmp/old_allocator.XXXXXX)}
src=$work/src
build=$work/build
jobs=${JOBS:-$(nproc)}
echo "tree: $root  work: $work  jobs: $jobs"

# The tree without .git, build folders and .exp.
rm -rf "$src"
mkdir -p "$src"
tar -C "$root" --exclude=./.git --exclude='./build*' --exclude=./.exp --exclude=./.whl -cf - . | tar -C "$src" -xf -
alloc=$src/common/gpu
# The only files this script changes: touched, so that a reused WORK of the same tree rebuilds what includes them.
touch "$alloc/allocator.h" "$alloc/allocator.cpp"
cp "$alloc/allocator.h" "$work/current_allocator.h"
cp "$alloc/allocator.cpp" "$work/current_allocator.cpp"

cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" \
  >"$OUT/configure.log" 2>&1 || {
  tail -30 "$OUT/configure.log"
  exit 1
}

# build NAME: builds gpu_gpu_tests from what is in $alloc now and keeps the binary as $work/NAME.
build() {
  local t0=$SECONDS
  if ! ninja -C "$build" -j "$jobs" gpu_gpu_tests >"$OUT/build_$1.log" 2>&1; then
    tail -40 "$OUT/build_$1.log"
    echo "build $1 failed: $OUT/build_$1.log"
    exit 1
  fi
  cp "$build/common/gpu/gpu_gpu_tests" "$work/$1"
  echo "built $1 in $((SECONDS - t0)) s ($(grep -c 'allocator.cpp.o' "$OUT/build_$1.log" || true) allocator object(s) compiled)"
}

# run NAME LOG: the binary $work/NAME on the GPU; a missing GPU fails (LADDER_REQUIRE_GPU=1 unless set), never skips.
run() {
  local rc=0
  LADDER_REQUIRE_GPU=${LADDER_REQUIRE_GPU-1} timeout 300 "$work/$1" --gtest_color=no >"$OUT/$2.log" 2>&1 || rc=$?
  echo "exit status: $rc" >>"$OUT/$2.log"
  echo "ran $1: exit status $rc -> $OUT/$2.log"
}

# mutate NAME FROM TO: the current allocator.cpp with the line FROM replaced by TO (a sed expression's two halves).
mutate() {
  cp "$work/current_allocator.h" "$alloc/allocator.h"
  cp "$work/current_allocator.cpp" "$alloc/allocator.cpp"
  if ! grep -qF "$2" "$alloc/allocator.cpp"; then
    echo "mutation $1 not applied: no line '$2' in the current allocator.cpp" | tee "$OUT/$1.log"
    return 1
  fi
  local from to
  from=$(printf '%s' "$2" | sed 's/[][\/.*^$&]/\\&/g')
  to=$(printf '%s' "$3" | sed 's/[\/&]/\\&/g')
  sed -i "s/$from/$to/" "$alloc/allocator.cpp"
  diff -u "$work/current_allocator.cpp" "$alloc/allocator.cpp" >"$OUT/$1.diff" || true
}

build new
run new new_allocator_test

cp "$here/old/allocator.h" "$here/old/allocator.cpp" "$alloc/"
diff -u "$here/old/pristine/allocator.h" "$here/old/allocator.h" >"$OUT/old_allocator_shim.diff" || true
diff -u "$here/old/pristine/allocator.cpp" "$here/old/allocator.cpp" >>"$OUT/old_allocator_shim.diff" || true
build old
# The two binaries hold different allocators: the new one's format string for a double free is only in the new one
# (the test's own words are in both).
grep -qaF 'device_free: {} was freed already' "$work/new" || { echo "new binary lacks the new allocator"; exit 1; }
if grep -qaF 'device_free: {} was freed already' "$work/old"; then echo "old binary holds the new allocator"; exit 1; fi
run old old_allocator_test

# With the seam: the cudaFree call goes through cuda_free; without it (a tree before the seam), through cudaFree.
if grep -qF 'check_cuda(cuda_free(p), "cudaFree(p)", __FILE__, __LINE__);' "$work/current_allocator.cpp"; then
  free_line='check_cuda(cuda_free(p), "cudaFree(p)", __FILE__, __LINE__);'
  ignored='(void)cuda_free(p);'
else
  free_line='CUDA_CHECK(cudaFree(p));'
  ignored='(void)cudaFree(p);'
fi
if mutate mutant_cudafree_ignored "$free_line" "$ignored"; then
  build mutant_cudafree_ignored
  run mutant_cudafree_ignored mutant_cudafree_ignored
fi
if mutate mutant_pending_kept 'collect(d, /*wait=*/true);' '/* collect(d, wait=true) left out */'; then
  build mutant_pending_kept
  run mutant_pending_kept mutant_pending_kept
fi
cp "$work/current_allocator.h" "$alloc/allocator.h"
cp "$work/current_allocator.cpp" "$alloc/allocator.cpp"

# One line per test: its verdict in each log (OK, FAILED, SKIPPED, or - when it did not run).
logs=(new_allocator_test old_allocator_test mutant_cudafree_ignored mutant_pending_kept)
{
  printf '%-60s' test
  for l in "${logs[@]}"; do printf ' %-24s' "$l"; done
  echo
  tests=$(grep -ho '^\[ RUN      \] [A-Za-z0-9_.]*' "$OUT/new_allocator_test.log" | sed 's/^\[ RUN      \] //')
  for t in $tests; do
    printf '%-60s' "$t"
    for l in "${logs[@]}"; do
      v=-
      if [ -f "$OUT/$l.log" ]; then
        if grep -q "^\[       OK \] $t " "$OUT/$l.log"; then
          v=OK
        elif grep -q "^\[  FAILED  \] $t " "$OUT/$l.log"; then
          v=FAILED
        elif grep -q "^\[  SKIPPED \] $t " "$OUT/$l.log"; then
          v=SKIPPED
        fi
      fi
      printf ' %-24s' "$v"
    done
    echo
  done
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
