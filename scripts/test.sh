#!/usr/bin/env bash
# Builds everything and runs every test. Without a GPU the GPU tests (ctest label `gpu`) report as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --build --preset default
ctest --preset default "$@"
