"""LadderGEGLUMLP's backward GEMM: as torch_train_step.py runs it (the GPU idle while Python reaches the backward),
and with the GPU kept busy in that time (torch.cuda._sleep on the stream just before y.backward). Per variant, five
profiled steps; the dgated_gemm and geglu_gemm_keep kernels' durations and the idle gap before each."""
import sys, json, tempfile
sys.path.insert(0, "06_train_mlp")
import torch
from torch_train_step import make

torch.manual_seed(0)
mlp = make("ladder", 768, 3072)
x = torch.empty(64, 128, 768, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1).requires_grad_(True)
dy = torch.empty(64, 128, 768, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)

def step(spin):
    mlp.zero_grad(set_to_none=True)
    x.grad = None
    y = mlp(x)
    if spin:
        torch.cuda._sleep(spin)
    y.backward(dy)

for spin in (0, 2_000_000, 0, 2_000_000):
    for _ in range(3):
        step(spin)
    torch.cuda.synchronize()
    path = tempfile.mktemp(suffix=".json")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            step(spin)
        torch.cuda.synchronize()
    prof.export_chrome_trace(path)
    ev = sorted((e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    rows = []
    for prev, e in zip(ev, ev[1:]):
        if "dgated" in e["name"] or "keep" in e["name"]:
            rows.append(f"{'dgated' if 'dgated' in e['name'] else 'keep'} {e['dur']:.1f} (after {e['ts'] - prev['ts'] - prev['dur']:.1f} idle, {prev['name'][:24]})")
    print(f"spin {spin}: " + "; ".join(rows))
