#!/usr/bin/env bash
# Do the tools that read PyTorch's traces read ours? Installs HolisticTraceAnalysis (with the pandas pip picks today,
# and again with pandas 2.2.3) and torch-tb-profiler from PyPI into virtualenvs, runs their analyses (consumers.py
# says which) on every committed reference trace and on PyTorch traces of the same chapters, and fails if one fails
# on ours where it works on PyTorch's. From the repository root:
#
#     tools/consumers/check_consumers.sh [--venv-dir DIR] [TRACE.json ...]
#
# The virtualenvs are made once under DIR (default build/consumers-venvs; the ctest uses its build folder) and reused:
# delete DIR to pick up newer releases. No network or no pip: prints why and exits 77 (ctest: skipped).
set -uo pipefail
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
  echo "consumers check skipped: $*"
  exit 77
}

# make_venv NAME PANDAS TOOL...: a virtualenv with the tools and what their analyses import, made once. The tools
# go in without their declared dependencies: HTA's JupyterLab and pytest (for its notebooks and tests) and the
# plugin's TensorBoard (the server around it) make the install three times longer, and nothing run here imports them.
make_venv() {
  local dir=$venvs/$1 pandas=$2
  shift 2
  [[ -f $dir/.installed ]] && return 0
  rm -rf "$dir"
  python3 -m venv "$dir" > /dev/null 2>&1 || skip "python3 -m venv does not work here (apt-get install python3-venv)"
  echo "installing $* and $pandas into $dir ..."
  local pip=("$dir/bin/pip" install -q --disable-pip-version-check --timeout 30 --retries 2)
  if ! { "${pip[@]}" --no-deps "$@" && "${pip[@]}" "$pandas" numpy networkx plotly psutil pyyaml absl-py; } \
      > "$dir.log" 2>&1; then
    tail -n 3 "$dir.log"
    rm -rf "$dir"
    skip "cannot install $* and $pandas from PyPI (no network, or no pip): see $dir.log"
  fi
  "$dir/bin/pip" list 2> /dev/null | grep -iE '^(holistictraceanalysis|traceinsight|pandas|numpy|torch-tb-profiler) ' > "$dir/.installed"
}

mkdir -p "$venvs"
command -v python3 > /dev/null || skip "no python3"
# Both at once (pip mostly waits on downloads): each in a subshell, whose skip() only ends itself.
(make_venv pandas-latest pandas HolisticTraceAnalysis torch-tb-profiler) &
(make_venv pandas-2.2.3 pandas==2.2.3 HolisticTraceAnalysis) &
# traceinsight, HTA's successor, pinned: the oracle of ladder-trace's idle time, launch statistics, kernel sequences
# and critical path (traceinsight_figures.py; common/trace/tests/data/traceinsight/figures.json holds its figures).
(make_venv traceinsight-0.6.1 pandas traceinsight==0.6.1) &
wait
for env in pandas-latest pandas-2.2.3 traceinsight-0.6.1; do
  [[ -f $venvs/$env/.installed ]] || skip "the $env virtualenv could not be made (see the lines above)"
done
for env in pandas-latest pandas-2.2.3 traceinsight-0.6.1; do
  echo "$env: $(tr '\n' ' ' < "$venvs/$env/.installed")"
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Two environments in parallel: HTA's first import is the slow part.
"$venvs/pandas-latest/bin/python" "$here/consumers.py" "${traces[@]}" > "$out/pandas-latest.jsonl" &
"$venvs/pandas-2.2.3/bin/python" "$here/consumers.py" --no-tb "${traces[@]}" > "$out/pandas-2.2.3.jsonl" &
"$venvs/traceinsight-0.6.1/bin/python" "$here/traceinsight_figures.py" --out "$out/traceinsight.json" 2> /dev/null &
wait
# traceinsight's figures today against the committed ones the CPU test holds ours to: a difference is a change in
# traceinsight (or a trace), and the committed file is to be written again and the test run.
python3 "$here/traceinsight_figures.py" --compare "$out/traceinsight.json" "$data/traceinsight/figures.json" || exit 1
cd "$root" && python3 "$here/consumers.py" --compare "$out/pandas-latest.jsonl" "$out/pandas-2.2.3.jsonl"
