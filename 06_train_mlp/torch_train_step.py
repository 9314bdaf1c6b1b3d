"""The blog's GeGLU MLP, one training step (forward, then backward for a given dy) under torch.profiler: the PyTorch
traces chapter 06 stands beside, recorded as the chapter records its own (schedule wait 1, warmup 1, active 3; shapes
and memory recorded). `ladder-trace diff` of 06_train_mlp --mode eager against the eager trace lines them up op for
op; `ladder-trace summary --steps` gives each step's GPU kernel time; `ladder-trace memory` its allocations.

    python 06_train_mlp/torch_train_step.py --out DIR [--modes eager,compile,ladder,ladder_recompute]

eager: nn.Linear, F.gelu(approximate="tanh"), the product, nn.Linear, as the blog's 03_simple_mlp.py; compile: the
same under torch.compile; ladder, ladder_recompute: chapter 05's LadderGEGLUMLP (recompute=False and True), which
needs the op library (05_torch_op/README.md); liger: Liger's LigerGEGLUMLP (`pip install liger-kernel`), the layer
the blog swaps in. A `_compile` suffix runs any of them under torch.compile. Shapes: the blog's, batch 64, seq 128,
dim 768, hidden 3072, bf16.

After recording, each mode prints one line: GPU kernel time per step (kernel durations summed over the profiled steps,
host gaps left out, as `ladder-trace summary --steps` counts GPU busy), wall time per step (CUDA events around 20
steps, median), the step's peak allocation above its start, and what the forward left allocated for the backward
beyond x and the output.
"""
import argparse
import json
import statistics
from pathlib import Path

import torch
import torch._functorch.config
import torch.nn as nn
import torch.nn.functional as F

# A compiled step traces the autograd formulas of the ladder_ops it imports now. PyTorch's AOTAutograd cache keys a
# compiled forward and backward on the forward's graph, which does not change when a custom op's registered backward
# does, so with the cache on, an edited ladder_ops would run the backward an earlier one traced.
torch._functorch.config.enable_autograd_cache = False


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
    base = mode.removesuffix("_compile")
    if base in ("eager", "compile"):
        mlp = SimpleGeGLUMLP(dim, hidden)
    elif base == "liger":
        from liger_kernel.transformers.geglu import LigerGEGLUMLP
        mlp = LigerGEGLUMLP(Config(dim, hidden))
    else:
        import ladder_ops
        mlp = ladder_ops.LadderGEGLUMLP(Config(dim, hidden), recompute=base == "ladder_recompute")
    mlp = mlp.to("cuda", torch.bfloat16)
    return torch.compile(mlp) if mode.endswith("compile") else mlp


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

    walls = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        walls.append(start.elapsed_time(end) * 1e3)
    mlp.zero_grad(set_to_none=True)
    x.grad = None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    y = mlp(x)
    held = torch.cuda.memory_allocated() - base - y.numel() * y.element_size()
    y.backward(dy)
    peak = torch.cuda.max_memory_allocated() - base
    del y
    path = out / f"torch_06_train_mlp_{mode}.json"
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, schedule=schedule, record_shapes=True, profile_memory=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(5):
            step()
            torch.cuda.synchronize()
            prof.step()
    events = json.loads(path.read_text())["traceEvents"]
    busy = sum(e["dur"] for e in events if e.get("cat") == "kernel") / 3  # the three active steps
    print(f"{mode:<24} GPU busy/step {busy:8.1f} us  wall/step {statistics.median(walls):8.1f} us  "
          f"peak {peak / 1e6:7.1f} MB  held for backward {held / 1e6:7.1f} MB  {path}")


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
