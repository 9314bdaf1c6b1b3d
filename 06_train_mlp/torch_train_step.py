"""The blog's GeGLU MLP, one training step (forward, then backward for a given dy) under torch.profiler: the PyTorch
traces chapter 06 stands beside, recorded as the chapter records its own (schedule wait 1, warmup 1, active 3; shapes
and memory recorded). `ladder-trace diff` of 06_train_mlp --mode eager against the eager trace lines them up op for
op; `ladder-trace summary --steps` gives each step's GPU kernel time; `ladder-trace memory` its allocations.

    python 06_train_mlp/torch_train_step.py --out DIR [--modes eager,compile,ladder,ladder_recompute]

eager: nn.Linear, F.gelu(approximate="tanh"), the product, nn.Linear, as the blog's 03_simple_mlp.py; compile: the
same under torch.compile; ladder, ladder_recompute: chapter 05's LadderGEGLUMLP (recompute=False and True), which
needs the op library (05_torch_op/README.md). Shapes: the blog's, batch 64, seq 128, dim 768, hidden 3072, bf16.
"""
import argparse
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F


class SimpleGeGLUMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.gelu(self.gate_proj(x), approximate="tanh") * self.up_proj(x))


class Config:
    def __init__(self, dim, hidden):
        self.hidden_size, self.intermediate_size, self.hidden_act = dim, hidden, "gelu_pytorch_tanh"


def make(mode, dim, hidden):
    if mode in ("eager", "compile"):
        mlp = SimpleGeGLUMLP(dim, hidden)
    else:
        import ladder_ops
        mlp = ladder_ops.LadderGEGLUMLP(Config(dim, hidden), recompute=mode == "ladder_recompute")
    mlp = mlp.to("cuda", torch.bfloat16)
    return torch.compile(mlp) if mode == "compile" else mlp


def record(mode, out, batch, seq, dim, hidden):
    torch.manual_seed(0)
    mlp = make(mode, dim, hidden)
    x = torch.empty(batch, seq, dim, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1).requires_grad_(True)
    dy = torch.empty(batch, seq, dim, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)

    def step():
        mlp.zero_grad(set_to_none=True)
        x.grad = None
        with torch.profiler.record_function("mlp_fwd"):
            y = mlp(x)
        with torch.profiler.record_function("mlp_bwd"):
            y.backward(dy)

    for _ in range(3):  # compile, cuBLAS heuristics, the caching allocator's first blocks: before the profiler
        step()
    torch.cuda.synchronize()
    path = out / f"torch_06_train_mlp_{mode}.json"
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, schedule=schedule, record_shapes=True, profile_memory=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(5):
            step()
            torch.cuda.synchronize()
            prof.step()
    print(f"{mode}: {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the traces")
    parser.add_argument("--modes", default="eager,compile,ladder,ladder_recompute")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU was found: the traces we recorded on an H100 are in traces/reference/h100/")
    args.out.mkdir(parents=True, exist_ok=True)
    for mode in args.modes.split(","):
        record(mode, args.out, 64, 128, 768, 3072)


if __name__ == "__main__":
    main()
