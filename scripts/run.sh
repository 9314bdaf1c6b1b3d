#!/usr/bin/env bash
# Builds the ladder and climbs it: every `run` line of chapters.txt, in its order, each run writing its trace under
# traces/. A rung this machine cannot run (no GPU, no torch, one GPU for 07, not an sm_90 GPU for 06's epilogue mode)
# is named with why, and the summary of its trace recorded on an H100 (traces/reference/h100/) is printed instead, so
# the ladder can be followed from a laptop. The last lines say what ran, what was skipped and why, one line each; the
# exit status is 1 when a run failed.
#
#   scripts/run.sh            build and climb
#   scripts/run.sh --plan     print what the climb would run and skip here, building and running nothing (the
#                             LADDER_PLAN_* variables of scripts/can_run.sh describe another machine instead)
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"  # started as `sh scripts/...`: the lines below need bash
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/chapters.sh
source scripts/can_run.sh
case ${1:-} in
  "") plan=0 ;;
  --plan) plan=1 ;;
  *) echo "error: unknown argument '$1' (usage: scripts/run.sh [--plan])" >&2; exit 2 ;;
esac
b=build
ref=traces/reference/h100
entries=$(chapters_entries run)

if ((plan)); then
  plan_facts "$b"
else
  scripts/setup.sh
  machine_facts "$b"
  # 05 needs the op library, built only with -DLADDER_TORCH=ON: configured so when torch imports and a GPU is here.
  if ((${#gpu_caps[@]})) && [ -z "$torch_why" ] && grep -q '^[^|]*|[^|]*torch' <<< "$entries" &&
     ! grep -q '^LADDER_TORCH:BOOL=ON' $b/CMakeCache.txt; then
    echo "torch imports: configuring with -DLADDER_TORCH=ON for chapter 05 (output in $b/torch_configure.log)"
    if ! cmake --preset default -DLADDER_TORCH=ON -DPython3_EXECUTABLE="$(command -v python3)" \
         > $b/torch_configure.log 2>&1; then
      torch_why=$(sed -n 's/.*-DLADDER_TORCH=ON \(needs .*\)\. LADDER_TORCH is OFF again.*/\1/p' $b/torch_configure.log)
      torch_why=${torch_why:-"configuring with -DLADDER_TORCH=ON failed: $b/torch_configure.log says why"}
      cmake --preset default > /dev/null  # the refusal turned LADDER_TORCH OFF again: everything else still builds
    fi
  fi
  # What the climb runs, and no more: the targets of the runs this machine can make, and ladder-trace (scripts/test.sh
  # builds the tests and the benchmarks too).
  targets=(ladder-trace)
  while IFS='|' read -r chapter needs name target launch args; do
    [ -n "$(why_not "$needs" "$target")" ] || [[ " ${targets[*]} " == *" $target "* ]] || targets+=("$target")
  done <<< "$entries"
  cmake --build --preset default --target "${targets[@]}"
fi

# summary REFERENCE: ladder-trace's summary of a committed trace, or of a folder of rank traces (each rank's).
summary() {
  local path=$ref/$1
  [ -d "$path" ] || path+=.json
  echo; echo "==== $path ===="
  if [ ! -e "$path" ]; then echo "not committed yet: scripts/record_traces.sh records it on a GPU"
  elif ((plan == 0)); then "$b/tools/ladder-trace" summary "$path" < /dev/null; fi
}

if ((${#gpu_caps[@]} == 0)); then
  echo
  echo "No NVIDIA GPU was found on this machine, so here are the summaries of the reference traces recorded on an H100."
  echo "tools/README.md, \"The tables in the terminal\", says what each column means."
fi
chapters=() ran=() skipped=() failed=()
while IFS='|' read -r chapter needs name target launch args; do
  [[ " ${chapters[*]} " == *" $chapter "* ]] || chapters+=("$chapter")
  why=$(why_not "$needs" "$target")
  if [ -n "$why" ]; then
    skipped+=("$chapter|$name|$why")
    ((${#gpu_caps[@]} == 0)) || { echo; echo "==== $chapter: $name skipped: $why; recorded on an H100:"; }
    summary "$name"
    continue
  fi
  chapters_command "$launch" "$b" "${#gpu_caps[@]}" "$args"
  echo; echo "==== ${command[*]} ===="
  rc=0
  ((plan)) || "${command[@]}" < /dev/null || rc=$?
  if ((rc == 0)); then ran+=("$chapter"); else failed+=("$name (exit $rc)"); fi
done <<< "$entries"

# The last lines. ran: each chapter that ran, with its count of runs when more than one.
echo
line=""
for chapter in "${chapters[@]}"; do
  n=0
  for c in "${ran[@]}"; do [ "$c" != "$chapter" ] || n=$((n + 1)); done
  ((n == 0)) || line+=", $chapter$( ((n == 1)) || echo " ($n runs)")"
done
label=ran; ((plan == 0)) || label="would run"
if [ -n "$line" ]; then echo "$label: ${line:2} (their traces are under traces/)"; else echo "$label: nothing"; fi
# skipped: one line per reason, naming a whole chapter when all its runs were skipped for it, else the runs.
whys=$(for s in "${skipped[@]}"; do echo "${s#*|*|}"; done | awk '!seen[$0]++')
while read -r why; do
  [ -n "$why" ] || continue
  line=""
  for chapter in "${chapters[@]}"; do
    all=$(grep -c "^$chapter|" <<< "$entries")
    mine=()
    for s in "${skipped[@]}"; do [[ $s != "$chapter|"*"|$why" ]] || mine+=("$(cut -d'|' -f2 <<< "$s")"); done
    ((${#mine[@]})) || continue
    if ((${#mine[@]} == all)); then line+=", $chapter"; else line+=", ${mine[*]}"; fi
  done
  echo "skipped: ${line:2}: $why; above: the summaries of their traces recorded on an H100"
done <<< "$whys"
for f in "${failed[@]}"; do echo "failed: $f: its output is above"; done
((${#failed[@]} == 0))
