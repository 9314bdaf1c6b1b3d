#!/usr/bin/env bash
# The ctest docs.figures_up_to_date: redraws every README picture (scripts/draw_figures.sh, the chapters' from the
# `figure` lines of chapters.txt) into a temporary folder and fails, naming the picture, when a committed one differs
# from what the committed trace draws now.
#   scripts/figures_up_to_date.sh LADDER_TRACE
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root"/scripts/draw_figures.sh "$1" "$tmp"
status=0 n=0
for new in "$tmp"/*/figures/*.svg; do
  rel=${new#"$tmp"/}
  n=$((n + 1))
  if ! cmp -s "$new" "$root/$rel"; then
    echo "stale picture: $rel differs from what scripts/draw_figures.sh draws now (run it and commit)"
    status=1
  fi
done
for old in "$root"/*/figures/*.svg; do  # a committed picture no line draws any more
  [[ -f $tmp/${old#"$root"/} ]] || { echo "stray picture: ${old#"$root"/} is drawn by no figure line of chapters.txt (nor scripts/draw_figures.sh)"; status=1; }
done
[[ $status -eq 0 ]] && echo "figures up to date: $n pictures"
exit $status
