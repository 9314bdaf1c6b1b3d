#!/usr/bin/env python3
"""record_torch_oracle: real torch.profiler traces and torch's own key_averages() tables, for ladder-trace's tests.

Each case profiles a small real model on the GPU and saves
  - the trace, as torch writes it:            <case>.json      (prof.export_chrome_trace)
  - torch's printed table of the same run:   tables.txt, under "==== <case> ===="
    (prof.key_averages().table(sort_by="cuda_time_total", row_limit=-1))
common/trace/tests/cpu_torch_tables_test.cpp then prints our table from each trace and compares it row by row with
torch's. The cases are what broke ladder-trace on real traces: backward on autograd threads, python stack
events, memory events, two streams at once, CUDA graphs, and a trace without ProfilerStep.

repeat=1 on every schedule: with the default (repeat forever) a new cycle starts when the last active step ends, and
at exit it replaces the recorded one (a trace with no step in it).

Each trace must stay small (< 1.5 MB, they are committed): the models are trimmed, not the traces.

Run (on a machine with a CUDA GPU and torch):  PYTHONUNBUFFERED=1 python3 bench/record_torch_oracle.py --out DIR
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

ACT = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
LIMIT = 1_500_000  # bytes per trace


def save(out, case, prof, tables):
    path = os.path.join(out, case + ".json")
    prof.export_chrome_trace(path)
    table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=-1)
    tables.append(f"==== {case} ====\n{table}\n")
    size = os.path.getsize(path)
    print(f"{case}: {size} bytes{'  TOO BIG' if size > LIMIT else ''}", flush=True)
    return size


def transformer(out, tables, active=2):
    """(1) One encoder layer, forward + backward, with stacks, memory and shapes, under a wait/warmup/active schedule."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=512, batch_first=True).cuda()
    x = torch.randn(8, 64, 256, device="cuda")
    with profile(activities=ACT, schedule=schedule(wait=1, warmup=1, active=active, repeat=1), with_stack=True, profile_memory=True,
                 record_shapes=True) as prof:
        for _ in range(2 + active):
            layer(x).sum().backward()
            torch.cuda.synchronize()
            prof.step()
    case = "transformer_fwd_bwd" if active == 2 else f"transformer_fwd_bwd_active{active}"
    if save(out, case, prof, tables) > LIMIT and active == 2:
        transformer(out, tables, active=1)  # one layer is as small as the model gets: then one active step


def two_streams(out, tables):
    """(2) GEMMs on two streams, three queued on each. Meant to run at once; on the H100 with torch 2.11, cuBLAS
    picks split-K kernels that fill the GPU (and the launches are slower than the kernels), so in the recorded trace
    they ran one after the other. The trace still has two streams, which the timeline must draw as two rows."""
    a = torch.randn(1024, 16384, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(16384, 1024, device="cuda", dtype=torch.bfloat16)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    with profile(activities=ACT, schedule=schedule(wait=0, warmup=1, active=2, repeat=1)) as prof:
        for _ in range(3):
            with torch.cuda.stream(s1):
                c1 = [a @ b for _ in range(3)]
            with torch.cuda.stream(s2):
                c2 = [a @ b for _ in range(3)]
            torch.cuda.synchronize()
            prof.step()
    del c1, c2
    save(out, "two_streams", prof, tables)


def cudagraph_mlp(out, tables):
    """(3) torch.compile(mode="reduce-overhead") of a small MLP: its kernels replay from a CUDA graph."""
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256)).cuda()
    f = torch.compile(mlp, mode="reduce-overhead")
    x = torch.randn(64, 256, device="cuda")
    with torch.no_grad():
        for _ in range(4):  # compile, warm up and record the graph before profiling
            f(x)
        torch.cuda.synchronize()
        with profile(activities=ACT, schedule=schedule(wait=0, warmup=1, active=2, repeat=1)) as prof:
            for _ in range(3):
                f(x)
                torch.cuda.synchronize()
                prof.step()
    save(out, "cudagraph_mlp", prof, tables)


def no_schedule(out, tables):
    """(4) A plain `with profile():` block: no ProfilerStep at all."""
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256)).cuda()
    x = torch.randn(64, 256, device="cuda")
    mlp(x)
    torch.cuda.synchronize()
    with profile(activities=ACT, record_shapes=True) as prof:
        for _ in range(2):
            mlp(x)
        torch.cuda.synchronize()
    save(out, "no_schedule", prof, tables)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--cases", default="transformer,two_streams,no_schedule,cudagraph_mlp")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    tables = []
    # The compile comes last: if it runs long, the other cases are saved already.
    for case in (globals()[name] for name in args.cases.split(",")):
        t0 = time.time()
        try:
            case(args.out, tables)
        except Exception as e:  # keep the others
            print(f"{case.__name__} failed: {e!r}", file=sys.stderr, flush=True)
        print(f"  ({time.time() - t0:.1f} s)", flush=True)
        with open(os.path.join(args.out, "key_averages_tables.txt"), "w") as f:
            f.write(f"# torch {torch.__version__}, {torch.cuda.get_device_name()}: "
                    "prof.key_averages().table(sort_by=\"cuda_time_total\", row_limit=-1)\n\n" + "".join(tables))


if __name__ == "__main__":
    main()
