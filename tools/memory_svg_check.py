#!/usr/bin/env python3
"""The ctest ladder-trace.svg_memory: `ladder-trace svg --memory` on torch's profile_memory trace gives well-formed SVG
(parsed by xml.etree) with no script or external reference, and each device's allocated curve is the trace's own:
one vertex per [memory] record of that device (plus the start), whose heights are the records' "Total Allocated"
(in time order) under one linear scale, to the drawing's 0.1 px.

  tools/memory_svg_check.py LADDER_TRACE TRACE.json.gz
"""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main():
    lt, trace = sys.argv[1], sys.argv[2]
    opener = gzip.open if open(trace, "rb").read(2) == b"\x1f\x8b" else open
    events = json.load(opener(trace, "rt"))["traceEvents"]
    mem = sorted((e for e in events if e.get("name") == "[memory]"), key=lambda e: e["ts"])  # stable: file order at ties
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "m.svg")
        subprocess.run([lt, "svg", "--memory", trace, "-o", out], check=True)
        root = ET.parse(out).getroot()  # raises on malformed XML
        text = open(out, encoding="utf-8").read()
    bad = [w for w in ("<script", "href=", "@import", "url(http") if w in text]
    paths = [p.get("d") for p in root.iter(NS + "path") if p.get("class") == "al"][:-1]  # the last is the legend's
    devices = sorted({(e["args"]["Device Type"], e["args"]["Device Id"]) for e in mem})
    failed = []
    if root.tag != NS + "svg" or bad:
        failed.append(f"not an SVG or forbidden {bad}")
    if len(paths) != len(devices):
        failed.append(f"{len(paths)} allocated curves for {len(devices)} devices")
    for d, path in zip(devices, paths):
        want = [e["args"]["Total Allocated"] for e in mem if (e["args"]["Device Type"], e["args"]["Device Id"]) == d]
        want = [want[0] - [e for e in mem if (e["args"]["Device Type"], e["args"]["Device Id"]) == d][0]["args"]["Bytes"]] + want
        ys = [float(v) for v in re.findall(r"V(-?[0-9.]+)", path)]
        ys = [float(re.match(r"M[0-9.]+ (-?[0-9.]+)", path).group(1))] + ys
        if len(ys) != len(want):
            failed.append(f"device {d}: {len(ys)} vertices for {len(want)} levels")
            continue
        lo, hi = min(want), max(want)
        y_lo, y_hi = ys[want.index(lo)], ys[want.index(hi)]
        for v, y in zip(want, ys):
            expect = y_lo + (v - lo) / (hi - lo) * (y_hi - y_lo) if hi > lo else y_lo
            if abs(expect - y) > 0.11:
                failed.append(f"device {d}: level {v} drawn at y {y}, the scale puts it at {expect:.2f}")
                break
    for f in failed:
        print("FAIL", f)
    if not failed:
        print(f"ok: {len(devices)} devices, {len(mem)} records drawn")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
