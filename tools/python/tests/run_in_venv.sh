#!/usr/bin/env bash
# The Python package's tests as a user meets them: a fresh virtualenv in WORK, `pip install REPO/tools/python[test]`
# (pip fetches scikit-build-core, nanobind, pandas and pytest from PyPI and builds the wheel with the repository's
# CMake), then pytest on tools/python/tests. Any failure, the build's included, fails (exit 1); only a machine without
# python3 or its venv module skips (exit 77). The wheel's build folder (WORK/wheel-build) is kept between runs, so a
# second run recompiles only what changed; pip's own cache (~/.cache/pip, or PIP_CACHE_DIR) keeps the downloads.
#
#     tools/python/tests/run_in_venv.sh REPO WORK
set -euo pipefail
repo=$(cd "$1" && pwd)
work=$2
command -v python3 > /dev/null || { echo "python package tests skipped: no python3 on PATH"; exit 77; }
mkdir -p "$work"
rm -rf "$work/venv"
if ! python3 -m venv "$work/venv" > "$work/venv.log" 2>&1; then
  cat "$work/venv.log"
  echo "python package tests skipped: python3 -m venv does not work here (Debian: apt-get install python3-venv)"
  exit 77
fi
py=$work/venv/bin/python
echo "building and installing $repo/tools/python into $work/venv ..."
if ! "$py" -m pip install --disable-pip-version-check -q "$repo/tools/python[test]" \
     --config-settings=build-dir="$work/wheel-build" > "$work/pip.log" 2>&1; then
  tail -n 40 "$work/pip.log"
  echo "FAILED: pip install $repo/tools/python (the whole log: $work/pip.log)"
  exit 1
fi
cd "$work"  # not the source folder: `import ladder_trace` must find the installed package
LADDER_REPO=$repo "$py" -m pytest -q -p no:cacheprovider "$repo/tools/python/tests"
