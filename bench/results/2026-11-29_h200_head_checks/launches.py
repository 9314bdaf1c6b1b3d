"""The launch of every Triton kernel in a trace (its time, grid and block): python3 launches.py TRACE.json"""
import json
import sys

for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e.get("cat") == "kernel" and e["name"].startswith("triton_"):
        a = e["args"]
        print(f'{e["name"]:<64} {e["dur"]:>8.1f} us  grid {a["grid"]}  block {a["block"]}')
