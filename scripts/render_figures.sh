#!/usr/bin/env bash
# Renders SVG pictures to PNG with headless Chromium, to look at them as a reader's browser shows them.
#   scripts/render_figures.sh OUT_DIR [SVG ...]      (default: every README picture, */figures/*.svg, docs/figures/ included)
# Needs Debian's `chromium` (apt-get install -y chromium); says so and exits 0 when it is absent, so a test may call it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/render_figures.sh OUT_DIR [SVG ...]}
shift
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then echo "render_figures: no chromium here, nothing rendered"; exit 0; fi
mkdir -p "$out"
if [[ $# -eq 0 ]]; then set -- "$root"/*/figures/*.svg; fi
for svg in "$@"; do
  [[ -f $svg ]] || continue
  # The window as large as the picture, read from its width/height attributes.
  read -r w h < <(sed -n 's/^<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2/p' "$svg" | head -1)
  png="$out/$(basename "$(dirname "$(dirname "$svg")")")_$(basename "$svg" .svg).png"
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="${w:-1200},${h:-600}" \
    --screenshot="$png" "file://$(realpath "$svg")" >/dev/null 2>&1
  echo "$png"
done
