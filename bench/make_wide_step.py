#!/usr/bin/env python3
"""make_wide_step: a synthetic trace of one ProfilerStep#1 holding N adds (each an aten::add op, its cudaLaunchKernel
and its kernel, linked by correlation and External id), to time `ladder-trace svg` on a step of many kernels.

  python3 bench/make_wide_step.py --kernels 20000 --out /tmp/wide.json
"""
import argparse
import json

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--kernels", type=int, default=20000)
p.add_argument("--out", required=True)
a = p.parse_args()
ev = []
pid = tid = 100
step_len = a.kernels * 10.0 + 20
ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": pid, "tid": tid, "ts": 1000.0,
           "dur": step_len, "args": {"External id": 1}})
for k in range(a.kernels):
    t = 1010.0 + k * 10.0
    ext, corr = 2 + k, 10 + k
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": pid, "tid": tid, "ts": t, "dur": 8.0,
               "args": {"External id": ext}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": tid, "ts": t + 2,
               "dur": 5.0, "args": {"External id": ext, "correlation": corr, "cbid": 211}})
    ev.append({"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": t + 9, "dur": 1.5,
               "args": {"External id": ext, "correlation": corr, "device": 0, "stream": 7}})
with open(a.out, "w") as f:
    json.dump({"traceEvents": ev}, f)
