#!/usr/bin/env bash
# Records the reference traces: every `run` and `trace` line of chapters.txt, in its order. Each run writes into a
# fresh folder (`--trace-dir`); the one trace it wrote (a file, or 07's folder of rank traces) is renamed to the
# line's reference name, and what the run printed goes beside it (NAME.txt); a run that writes several traces (05's
# script, five) keeps their names. Then machine.txt. A line this machine cannot run (fewer GPUs than it needs, no
# torch, not an sm_90 GPU: chapters.txt says what each needs) is left out, and the last lines say which and why.
# Needs a GPU and a configured build; the targets it runs are built first.
#
#   scripts/record_traces.sh OUT_DIR [BUILD_DIR]      e.g. scripts/record_traces.sh traces/reference/h100 build
set -euo pipefail
out=$(realpath -m "${1:?usage: scripts/record_traces.sh OUT_DIR [BUILD_DIR]}")
build=$(realpath -m "${2:-build}")
cd "$(dirname "$0")/.."
source scripts/chapters.sh
source scripts/can_run.sh
machine_facts "$build"
entries=$(chapters_entries "run|trace")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

targets=() skipped=()
while IFS='|' read -r chapter needs name target launch args; do
  why=$(why_not "$needs" "$target")
  if [ -n "$why" ]; then skipped+=("$name: $why"); continue; fi
  [[ " ${targets[*]} " == *" $target "* ]] || targets+=("$target")
done <<< "$entries"
((${#targets[@]})) || { echo "error: nothing to record here: ${skipped[0]}" >&2; exit 1; }
cmake --build "$build" --target "${targets[@]}"
# 05's script finds the op library in build/; another build folder's is named to it.
export LADDER_TORCH_LIB=${LADDER_TORCH_LIB:-$build/chapters/05_torch_op/libladder_torch_ops.so}

mkdir -p "$out"
while IFS='|' read -r chapter needs name target launch args; do
  [ -z "$(why_not "$needs" "$target")" ] || continue
  # A run on N GPUs (gpusN) is started on N, whatever the machine has: its reference name says N.
  chapters_command "$launch" "$build" "$(chapters_gpus_needed "$needs")" "$args --trace-dir $tmp/run"
  rm -rf "$tmp/run" && mkdir -p "$tmp/run" "$(dirname "$out/$name")"
  echo "== $name: ${command[*]}"
  "${command[@]}" > "$out/$name.txt" 2>&1 < /dev/null || { cat "$out/$name.txt"; exit 1; }
  made=("$tmp"/run/*)
  [ -e "${made[0]}" ] || { echo "error: $name: the run wrote no trace into $tmp/run" >&2; exit 1; }
  if ((${#made[@]} > 1)); then
    mv "${made[@]}" "$out/"
  elif [ -d "${made[0]}" ]; then
    rm -rf "${out:?}/$name" && mv "${made[0]}" "$out/$name"
  else
    mv "${made[0]}" "$out/$name.json"
  fi
done <<< "$entries"

{
  nvidia-smi -L
  nvidia-smi --query-gpu=driver_version --format=csv
  date -u
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>/dev/null || true
} > "$out/machine.txt"
echo "recorded into $out"
for s in "${skipped[@]}"; do echo "not recorded: $s"; done
