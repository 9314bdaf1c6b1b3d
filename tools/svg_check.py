#!/usr/bin/env python3
"""The ctest ladder-trace.svg_torch_traces: `ladder-trace svg` on PyTorch's own traces gives well-formed SVG (parsed
by xml.etree) with a lane headed for every CPU thread and every GPU stream the trace holds, and no script or
external reference.

  tools/svg_check.py LADDER_TRACE TRACE.json ...
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HOST = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver"}
GPU = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"}
NS = "{http://www.w3.org/2000/svg}"


def lanes_in(trace):
    events = json.load(open(trace))
    events = events["traceEvents"] if isinstance(events, dict) else events
    want = set()
    for e in events:
        if e.get("ph") != "X" or not isinstance(e.get("pid"), int):
            continue
        if e.get("cat") in HOST:
            want.add(f"CPU thread {e['tid']}")
        elif e.get("cat") in GPU:
            want.add(f"GPU {e['pid']} \u00b7 stream {e['tid']}")
    return want


def main():
    lt, traces = sys.argv[1], sys.argv[2:]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for trace in traces:
            out = os.path.join(tmp, "t.svg")
            # The whole trace (--from 0): every thread and stream it holds must be drawn.
            subprocess.run([lt, "svg", trace, "--from", "0", "-o", out], check=True)
            root = ET.parse(out).getroot()  # raises on malformed XML
            text = open(out, encoding="utf-8").read()
            heads = {t.text.replace(" (main)", "") for t in root.iter(NS + "text") if t.get("class") == "h"}
            missing = lanes_in(trace) - heads
            bad = [w for w in ("<script", "href=", "@import", "url(http") if w in text]
            name = os.path.basename(trace)
            if missing or bad or root.tag != NS + "svg":
                print(f"FAIL {name}: lanes missing {sorted(missing)}, forbidden {bad}")
                failed += 1
            else:
                print(f"ok {name}: {len(heads)} lanes ({', '.join(sorted(heads))})")
            subprocess.run([lt, "svg", trace, "-o", out], check=True)  # the default (last step) parses too
            ET.parse(out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
