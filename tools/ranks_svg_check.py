#!/usr/bin/env python3
"""The ctest ladder-trace.svg_rank_folders: `ladder-trace svg FOLDER` draws every rank of a folder of PyTorch rank
traces in one well-formed SVG (parsed by xml.etree): one lane group (<g class="rank" data-rank="R">) per trace file,
with the rank its trace says it is, a GPU lane per stream the rank's step used, one dashed line per collective joined
across the ranks, and no script or external reference; `ladder-trace timeline FOLDER` prints a block per rank.

  tools/ranks_svg_check.py LADDER_TRACE FOLDER[:COLLECTIVES] ...   (COLLECTIVES: how many the last step holds)
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def ranks_in(folder):
    out = []
    for name in sorted(os.listdir(folder)):
        if not (name.endswith(".json") or name.endswith(".gz")):
            continue
        path = os.path.join(folder, name)
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        with (gzip.open if gz else open)(path, "rt") as f:
            out.append(json.load(f)["distributedInfo"]["rank"])
    return sorted(out)


def main():
    lt, cases = sys.argv[1], sys.argv[2:]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            folder, _, joins = case.partition(":")
            name = os.path.basename(folder.rstrip("/"))
            out = os.path.join(tmp, "ranks.svg")
            subprocess.run([lt, "svg", folder, "-o", out], check=True)
            root = ET.parse(out).getroot()  # raises on malformed XML
            text = open(out, encoding="utf-8").read()
            groups = [g for g in root.iter(NS + "g") if g.get("class") == "rank"]
            drawn = sorted(int(g.get("data-rank")) for g in groups)
            gpu_lanes = [sum(1 for t in g.iter(NS + "text") if (t.text or "").startswith("GPU ")) for g in groups]
            lines = sum(1 for p in root.iter(NS + "polyline") if p.get("class") == "j")
            bad = [w for w in ("<script", "href=", "@import", "url(http") if w in text]
            timeline = subprocess.run([lt, "timeline", folder, "--width", "120"], check=True, capture_output=True,
                                      text=True).stdout
            blocks = sorted(int(l.split()[1]) for l in timeline.splitlines() if l.startswith("rank "))
            want = ranks_in(folder)
            problems = []
            if root.tag != NS + "svg" or bad:
                problems.append(f"not a plain SVG ({bad})")
            if drawn != want:
                problems.append(f"lane groups for ranks {drawn}, the folder holds ranks {want}")
            if not all(gpu_lanes):
                problems.append(f"a rank without a GPU lane ({gpu_lanes})")
            if joins and lines != int(joins):
                problems.append(f"{lines} collectives joined, the step holds {joins}")
            if blocks != want:
                problems.append(f"timeline blocks for ranks {blocks}")
            if problems:
                print(f"FAIL {name}: " + "; ".join(problems))
                failed += 1
            else:
                print(f"ok {name}: {len(groups)} lane groups (ranks {drawn}), GPU lanes {gpu_lanes}, {lines} "
                      f"collectives joined; timeline blocks {blocks}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
