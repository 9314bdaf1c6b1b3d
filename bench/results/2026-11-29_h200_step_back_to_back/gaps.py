"""Two questions about PyTorch's training step of the blog's MLP, on one GPU, in one process:
1. Does a kernel run slower when the GPU waits for Python between kernels (torch_train_step.py syncs after each step,
   and its backward is launched by autograd, so the GPU idles most of the step) than when the steps run back to back?
   Each mode is profiled twice, 5 steps each: "synced" as torch_train_step.py does (synchronize after every step),
   "queued" with the GPU held by torch.cuda._sleep while the CPU queues all 5 steps, so they run back to back.
2. LadderGEGLUMLP's dx as one GEMM over the stacked weights ("stacked") against two GEMMs ("apart": the same module
   with stacked_weights answering None), eager and compiled.
Prints GPU busy per step (kernel time summed over the 5 steps / 5) and each kernel's mean.
"""
import collections
import json
import sys
import tempfile

import torch

sys.path.insert(0, "06_train_mlp")
import ladder_ops  # noqa: E402
from torch_train_step import SimpleGeGLUMLP, Config  # noqa: E402

B, S, D, H = 64, 128, 768, 3072
real_stacked = ladder_ops.stacked_weights


def build(mode):
    torch.manual_seed(0)
    if mode.startswith("compile"):
        mlp = SimpleGeGLUMLP(D, H)
    else:
        mlp = ladder_ops.LadderGEGLUMLP(Config(D, H))
    mlp = mlp.to("cuda", torch.bfloat16)
    return torch.compile(mlp) if mode.endswith("compile") else mlp


def profile(mlp, queued):
    x = torch.empty(B, S, D, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1).requires_grad_(True)
    dy = torch.empty(B, S, D, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)

    def step():
        mlp.zero_grad(set_to_none=True)
        x.grad = None
        mlp(x).backward(dy)

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        if queued:
            torch.cuda._sleep(200_000_000)  # ~0.1 s: the CPU queues the 5 steps meanwhile
        for _ in range(5):
            step()
            if not queued:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        events = json.load(open(f.name))["traceEvents"]
    kernels = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "kernel" and "sleep" not in e["name"]:
            kernels[e["name"]].append(e["dur"])
    busy = sum(sum(v) for v in kernels.values()) / 5
    return busy, {k: sum(v) / len(v) for k, v in kernels.items()}


def main():
    print(torch.cuda.get_device_name(), torch.__version__)
    for rnd in (1, 2):
        for mode in ("compile", "ladder", "ladder_compile"):
            for layout in (("stacked", "apart") if mode.startswith("ladder") else ("-",)):
                ladder_ops.stacked_weights = real_stacked if layout != "apart" else (lambda a, b: None)
                torch._dynamo.reset()
                mlp = build(mode)
                for queued in (False, True):
                    busy, kernels = profile(mlp, queued)
                    name = f"round {rnd} {mode:<15} {layout:<8} {'queued' if queued else 'synced':<7}"
                    top = "; ".join(f"{k[:38]} {v:.2f}" for k, v in sorted(kernels.items(), key=lambda kv: -kv[1])[:7])
                    print(f"{name} GPU busy/step {busy:7.1f} us | {top}", flush=True)
    ladder_ops.stacked_weights = real_stacked


if __name__ == "__main__":
    main()
