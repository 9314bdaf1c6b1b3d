#!/usr/bin/env bash
# The Python package's tests as a user meets them: a fresh virtualenv in WORK, `pip install REPO/tools/python[test]`
# (pip fetches scikit-build-core, nanobind, pandas and pytest from PyPI, at the versions constraints.txt pins, and
# builds the wheel with the repository's CMake), then pytest on tools/python/tests. Any failure, the build's included,
# fails (exit 1). Skipped (exit 77, with one line saying why): no python3 or no venv module, a python3 older than the
# pinned versions need (3.11), or no network (pip could not download one small package first). The wheel's build folder
# (WORK/wheel-build) is kept between runs, so a second run recompiles only what changed; pip's own cache
# (~/.cache/pip, or PIP_CACHE_DIR) keeps the downloads.
#
#     tools/python/tests/run_in_venv.sh REPO WORK
set -euo pipefail
# What pip's log says when it could not reach its package index: no route, no DNS, refused, a proxy that fails.
no_network='NewConnectionError|ConnectTimeoutError|ProxyError|Network is unreachable'
no_network+='|Temporary failure in name resolution|Name or service not known|Connection refused'
repo=$(cd "$1" && pwd)
work=$2
skip() {
  echo "python package: skipped ($*)"
  exit 77
}
command -v python3 > /dev/null || skip "no python3 on PATH"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
  skip "the pinned pandas 3.1.1 and numpy 2.4.6 need python3 >= 3.11, this is $(python3 -V 2>&1)"
mkdir -p "$work"
rm -rf "$work/venv"
if ! python3 -m venv "$work/venv" > "$work/venv.log" 2>&1; then
  cat "$work/venv.log"
  skip "python3 -m venv does not work here (Debian: apt-get install python3-venv)"
fi
py=$work/venv/bin/python
# Can pip reach its package index? One small download first, so that a failure of the install below is a failure:
# pip logs its retries even when one succeeds, and a build that fails after them must not pass for a skip.
if ! "$py" -m pip download -q --disable-pip-version-check --no-deps --timeout 15 --retries 1 -d "$work/probe" pip \
     > "$work/probe.log" 2>&1; then
  grep -qE "$no_network" "$work/probe.log" && skip "no network: pip could not reach its package index ($work/probe.log)"
  cat "$work/probe.log"
  echo "FAILED: pip download pip, the check that pip reaches its package index"
  exit 1
fi
echo "building and installing $repo/tools/python into $work/venv ..."
# PIP_CONSTRAINT, not -c: pip's isolated build environment (scikit-build-core, nanobind) reads it too.
if ! PIP_CONSTRAINT=$repo/tools/python/tests/constraints.txt \
     "$py" -m pip install --disable-pip-version-check -q --retries 2 "$repo/tools/python[test]" \
     --config-settings=build-dir="$work/wheel-build" > "$work/pip.log" 2>&1; then
  tail -n 40 "$work/pip.log"
  echo "FAILED: pip install $repo/tools/python (the whole log: $work/pip.log)"
  exit 1
fi
cd "$work"  # not the source folder: `import ladder_trace` must find the installed package
LADDER_REPO=$repo "$py" -m pytest -q -p no:cacheprovider "$repo/tools/python/tests"
