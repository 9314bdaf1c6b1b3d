#!/usr/bin/env bash
# Build with torch, every GPU test, 06 under the sanitizer.
set -uo pipefail
export PHASES="build gpu sanitizer"
bash "$(dirname "$0")/gpu_check.sh"
