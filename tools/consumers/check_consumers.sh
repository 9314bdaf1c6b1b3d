#!/usr/bin/env bash
# Do the tools that read PyTorch's traces read ours? Installs HolisticTraceAnalysis (with pandas 3.1.1, and again
# with pandas 2.2.3) and torch-tb-profiler from PyPI into virtualenvs, at the versions constraints.txt pins, runs their
# analyses (consumers.py says which) on every committed reference trace and on PyTorch traces of the same chapters,
# and fails if one fails on ours where it works on PyTorch's. From the repository root:
#
#     tools/consumers/check_consumers.sh [--venv-dir DIR] [TRACE.json ...]
#
# The virtualenvs are made once under DIR (default build/consumers-venvs; the ctest uses its build folder) and reused
# while the pinned versions stay the same. Skipped (exit 77, ctest: skipped) with one line saying why: no python3, no
# venv module, a python3 older than the pinned versions need (3.11), or no network (pip could not reach its package
# index). Any other failure to install fails the check.
set -uo pipefail
# What pip's log says when it could not reach its package index: no route, no DNS, refused, a proxy that fails.
no_network='NewConnectionError|ConnectTimeoutError|ProxyError|Network is unreachable'
no_network+='|Temporary failure in name resolution|Name or service not known|Connection refused'
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venvs=$root/build/consumers-venvs
if [[ ${1:-} == --venv-dir ]]; then
  venvs=$2
  shift 2
fi
traces=("$@")
if [[ ${#traces[@]} -eq 0 ]]; then
  shopt -s nullglob globstar
  traces=("$root"/traces/reference/**/*.json)
fi
data=$root/common/trace/tests/data
# PyTorch's traces of the same chapters: the baseline each of ours is compared with, also for traces named by hand.
traces+=("$data"/torch_01_matmul_add_64_eager.json "$data"/torch_01_matmul_add_4096_eager.json
         "$data"/torch_02_linear_eager_h100.json "$data"/torch_03_simple_mlp_compiled_h100.json
         "$data"/torch_03_simple_mlp_eager.json)

skip() {
  echo "consumers check: skipped ($*)"
  exit 77
}
constraints=$here/constraints.txt

# make_venv NAME PANDAS TOOL...: a virtualenv with the tools and what their analyses import, made once (again when
# the pinned versions change). The tools go in without their declared dependencies: HTA's JupyterLab and pytest (for
# its notebooks and tests) and the plugin's TensorBoard (the server around it) make the install three times longer,
# and nothing run here imports them.
make_venv() {
  local dir=$venvs/$1 pandas=$2
  shift 2
  local want
  want="$pandas $* $(cksum < "$constraints")"
  [[ -f $dir/.installed && $(head -n 1 "$dir/.installed") == "$want" ]] && return 0
  rm -rf "$dir"
  python3 -m venv "$dir" > /dev/null 2>&1 || skip "python3 -m venv does not work here (apt-get install python3-venv)"
  # Can pip reach its package index? One small download first, so that a failure of the installs below is a failure:
  # pip logs its retries even when one succeeds.
  if ! "$dir/bin/pip" download -q --disable-pip-version-check --no-deps --timeout 15 --retries 1 -d "$dir.probe" pip \
       > "$dir.log" 2>&1; then
    rm -rf "$dir"
    grep -qE "$no_network" "$dir.log" && skip "no network: pip could not reach its package index ($dir.log)"
    cat "$dir.log"
    echo "FAILED: pip download pip, the check that pip reaches its package index"
    exit 1
  fi
  echo "installing $* and $pandas into $dir ..."
  local pip=("$dir/bin/pip" install -q --disable-pip-version-check --timeout 30 --retries 2 -c "$constraints")
  if ! { "${pip[@]}" --no-deps "$@" && "${pip[@]}" "$pandas" numpy networkx plotly psutil pyyaml absl-py; } \
      > "$dir.log" 2>&1; then
    rm -rf "$dir"
    tail -n 20 "$dir.log"
    echo "FAILED: pip install $* $pandas (the whole log: $dir.log)"
    exit 1
  fi
  { echo "$want"; "$dir/bin/pip" list 2> /dev/null | grep -iE '^(holistictraceanalysis|traceinsight|pandas|numpy|torch-tb-profiler) '; } \
    > "$dir/.installed"
}

mkdir -p "$venvs"
command -v python3 > /dev/null || skip "no python3"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
  skip "the pinned numpy 2.4.6 and networkx 3.6.1 need python3 >= 3.11, this is $(python3 -V 2>&1)"
# Both at once (pip mostly waits on downloads): each in a subshell, whose exit ends only itself; the first to stop
# says why, and the check ends with its code (77: skipped, 1: failed).
(make_venv pandas-3.1.1 pandas==3.1.1 HolisticTraceAnalysis torch-tb-profiler) &
first=$!
(make_venv pandas-2.2.3 pandas==2.2.3 HolisticTraceAnalysis) &
second=$!
# traceinsight, HTA's successor, pinned: the oracle of ladder-trace's idle time, launch statistics, kernel sequences
# and critical path (traceinsight_figures.py; common/trace/tests/data/traceinsight/figures.json holds its figures).
(make_venv traceinsight-0.6.1 pandas==3.1.1 traceinsight==0.6.1) &
third=$!
rc1=0 rc2=0 rc3=0
wait $first || rc1=$?
wait $second || rc2=$?
wait $third || rc3=$?
for rc in $rc1 $rc2 $rc3; do
  [[ $rc -eq 1 ]] && exit 1
done
for rc in $rc1 $rc2 $rc3; do
  [[ $rc -eq 0 ]] || exit "$rc"
done
for env in pandas-3.1.1 pandas-2.2.3 traceinsight-0.6.1; do
  echo "$env: $(tail -n +2 "$venvs/$env/.installed" | tr '\n' ' ')"
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Two environments in parallel: HTA's first import is the slow part.
"$venvs/pandas-3.1.1/bin/python" "$here/consumers.py" "${traces[@]}" > "$out/pandas-3.1.1.jsonl" &
"$venvs/pandas-2.2.3/bin/python" "$here/consumers.py" --no-tb "${traces[@]}" > "$out/pandas-2.2.3.jsonl" &
"$venvs/traceinsight-0.6.1/bin/python" "$here/traceinsight_figures.py" --out "$out/traceinsight.json" 2> /dev/null &
wait
# traceinsight's figures today against the committed ones the CPU test holds ours to: a difference is a change in
# traceinsight (or a trace), and the committed file is to be written again and the test run.
python3 "$here/traceinsight_figures.py" --compare "$out/traceinsight.json" "$data/traceinsight/figures.json" || exit 1
cd "$root" && python3 "$here/consumers.py" --compare "$out/pandas-3.1.1.jsonl" "$out/pandas-2.2.3.jsonl"
