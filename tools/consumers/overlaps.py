#!/usr/bin/env python3
"""Prints every GPU activity that starts before the previous one on its stream ended, in any Kineto trace (ours or
PyTorch's): which pair, by how many ns. Streams are read from the "stream" arg, not the tid, so a trace that draws
overlapped kernels on a row of their own is measured the same way.

    python3 tools/consumers/overlaps.py TRACE.json [...]
"""
import collections
import json
import sys


def ns(us):  # Kineto writes "us.nnn": exact integer ns
    return round(float(us) * 1000)


def overlaps(path):
    doc = json.load(open(path))
    by_stream = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            a = e.get("args", {})
            by_stream[(a.get("device", e.get("pid")), a.get("stream", e.get("tid")))].append(
                (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
    found = []
    n = 0
    for key, ks in by_stream.items():
        ks.sort()
        n += len(ks)
        for prev, cur in zip(ks, ks[1:]):
            if cur[0] < prev[1]:
                found.append((key, prev[1] - cur[0], prev[2], cur[2]))
    return n, found


def short(name):
    return name if len(name) < 60 else name[:57] + "..."


if __name__ == "__main__":
    for path in sys.argv[1:]:
        n, found = overlaps(path)
        print(f"{path}: {n} GPU activities, {len(found)} start before the previous one on their stream ends")
        pairs = collections.defaultdict(list)
        for (dev, stream), d, a, b in found:
            pairs[(stream, short(a), short(b))].append(d)
        for (stream, a, b), ds in sorted(pairs.items()):
            print(f"  stream {stream}: {len(ds)}x '{b}' starts {min(ds)}..{max(ds)} ns before '{a}' ends")
