#!/usr/bin/env python3
"""record_torch_user_traces: the traces PyTorch users keep, recorded by torch itself, as oracles for ladder-trace.

Where record_torch_oracle.py makes one plain .json per case, this one writes what training scripts leave behind:
  - memory/     a small MLP training step (forward, backward, optimizer) under profile_memory=True and
                record_shapes=True, written by tensorboard_trace_handler(use_gzip=True) (a .pt.trace.json.gz), with
                torch's key_averages tables (memory columns included) and torch.cuda.max_memory_allocated() per step
                in memory/torch.txt;
  - streams/    work queued on two streams at once that really overlaps: torch.cuda._sleep, a one-block kernel that
                spins, then a small elementwise op, on each stream in turn (gzip too), with its table;
  - flops/      a training step of a small convolutional MLP under every profiler option (record_shapes,
                profile_memory, with_stack, with_flops, with_modules), as one plain flops.json, with torch's tables
                (its `Total MFLOPs` column among them) in flops/torch.txt;
  - ranks/      a 2-rank torch.distributed training step (gloo: both ranks on this one GPU, gradients all-reduced on
                the CPU), one rank<R>.*.pt.trace.json.gz per rank, as torchtune names them, and each rank's table in
                ranks/rank<R>.txt.

Run (a machine with a CUDA GPU and torch):  PYTHONUNBUFFERED=1 python3 bench/record_torch_user_traces.py --out DIR
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

ACT = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
TABLE = dict(sort_by="cuda_time_total", row_limit=-1)


def mlp():
    return nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).cuda()


def memory(out):
    """A training step with profile_memory=True: [memory] events, torch's memory columns, and the peak torch saw."""
    d = os.path.join(out, "memory")
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(0)
    model = mlp()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(256, 512, device="cuda")
    lines = []
    with profile(activities=ACT, schedule=schedule(wait=1, warmup=1, active=2, repeat=1), profile_memory=True,
                 record_shapes=True, on_trace_ready=tensorboard_trace_handler(d, worker_name="memory",
                                                                              use_gzip=True)) as prof:
        for step in range(4):
            torch.cuda.reset_peak_memory_stats()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            lines.append(f"step {step}: torch.cuda.max_memory_allocated() = {torch.cuda.max_memory_allocated()} "
                         f"bytes, memory_allocated() = {torch.cuda.memory_allocated()} bytes, "
                         f"memory_reserved() = {torch.cuda.memory_reserved()} bytes")
            prof.step()
    with open(os.path.join(d, "torch.txt"), "w") as f:
        f.write(f"# torch {torch.__version__}, {torch.cuda.get_device_name()}; ProfilerStep#2 and #3 are recorded\n")
        f.write("\n".join(lines) + "\n\n")
        f.write("==== key_averages().table(sort_by=\"cuda_time_total\", row_limit=-1) ====\n")
        f.write(prof.key_averages().table(**TABLE) + "\n")
        f.write("==== key_averages().table(sort_by=\"self_cuda_memory_usage\", row_limit=-1) ====\n")
        f.write(prof.key_averages().table(sort_by="self_cuda_memory_usage", row_limit=-1) + "\n")
        f.write("==== key_averages(group_by_input_shape=True).table(sort_by=\"cuda_time_total\", row_limit=-1) ====\n")
        f.write(prof.key_averages(group_by_input_shape=True).table(**TABLE) + "\n")
    print("\n".join(lines))


def streams(out):
    """Two streams whose kernels overlap. Small elementwise kernels alone do not: each is shorter than its launch, so
    a stream's queue never builds up. torch.cuda._sleep spins one block for a number of cycles (400,000: about 200 us
    on an H100; 50,000 took 26 us there, shorter than the profiled launches between them, and nothing overlapped), so
    three of them queue up on one stream while the other stream's work is launched and starts."""
    d = os.path.join(out, "streams")
    os.makedirs(d, exist_ok=True)
    xs = [torch.randn(64, 1024, device="cuda") for _ in range(2)]
    s = [torch.cuda.Stream(), torch.cuda.Stream()]
    torch.cuda.synchronize()
    with profile(activities=ACT, schedule=schedule(wait=0, warmup=1, active=2, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(d, worker_name="streams", use_gzip=True)) as prof:
        for _ in range(3):
            for _ in range(3):
                for i in range(2):
                    with torch.cuda.stream(s[i]):
                        for _ in range(3):
                            torch.cuda._sleep(400_000)
                            xs[i] = torch.sin(xs[i])
            torch.cuda.synchronize()
            prof.step()
    with open(os.path.join(d, "torch.txt"), "w") as f:
        f.write(f"# torch {torch.__version__}, {torch.cuda.get_device_name()}\n")
        f.write(prof.key_averages().table(**TABLE) + "\n")


class ConvMlp(nn.Module):
    """Every op torch counts FLOPs for that a small training step reaches: conv2d, addmm (Linear with a bias), mm
    (without), bmm, mul and add."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.up = nn.Linear(16 * 8 * 8, 512)
        self.down = nn.Linear(512, 256, bias=False)

    def forward(self, x):
        h = self.conv(x).flatten(1)
        h = torch.nn.functional.gelu(self.up(h))
        h = h * h + h                                      # aten::mul, aten::add
        a = h.view(-1, 16, 32)
        h = torch.bmm(a, a.transpose(1, 2)).flatten(1)      # aten::bmm: [B, 16, 32] x [B, 32, 16]
        return self.down(torch.cat([h, h], 1))


def flops(out):
    """A training step under every profiler option: with_flops=True is what gives torch's table its FLOPs column."""
    d = os.path.join(out, "flops")
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(0)
    model = ConvMlp().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(64, 3, 8, 8, device="cuda")
    with profile(activities=ACT, schedule=schedule(wait=1, warmup=1, active=2, repeat=1), record_shapes=True,
                 profile_memory=True, with_stack=True, with_flops=True, with_modules=True) as prof:
        for _ in range(4):
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            prof.step()
    prof.export_chrome_trace(os.path.join(d, "flops.json"))
    with open(os.path.join(d, "torch.txt"), "w") as f:
        f.write(f"# torch {torch.__version__}, {torch.cuda.get_device_name()}; ProfilerStep#2 and #3 are recorded\n")
        f.write("==== key_averages().table(sort_by=\"cuda_time_total\", row_limit=-1) ====\n")
        f.write(prof.key_averages().table(**TABLE) + "\n")
        f.write("==== key_averages(group_by_input_shape=True).table(sort_by=\"cuda_time_total\", row_limit=-1) ====\n")
        f.write(prof.key_averages(group_by_input_shape=True).table(**TABLE) + "\n")


def rank_main(rank, world, d, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(rank)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(256 * (rank + 1), 512, device="cuda")  # rank 1 has twice the work: rank 0 waits for it
    with profile(activities=ACT, schedule=schedule(wait=1, warmup=1, active=2, repeat=1), record_shapes=True,
                 on_trace_ready=tensorboard_trace_handler(d, worker_name=f"rank{rank}", use_gzip=True)) as prof:
        for _ in range(4):
            model(x).square().mean().backward()
            grads = [p.grad.cpu() for p in model.parameters()]
            for g in grads:
                dist.all_reduce(g)
            for p, g in zip(model.parameters(), grads):
                p.grad.copy_(g / world)
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            prof.step()
    with open(os.path.join(d, f"rank{rank}.txt"), "w") as f:
        f.write(f"# torch {torch.__version__}, {torch.cuda.get_device_name()}, rank {rank} of {world} (gloo)\n")
        f.write(prof.key_averages().table(**TABLE) + "\n")
    dist.destroy_process_group()


def ranks(out, world=2):
    d = os.path.join(out, "ranks")
    os.makedirs(d, exist_ok=True)
    mp.spawn(rank_main, args=(world, d, 29511), nprocs=world, join=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--cases", default="memory,streams,flops,ranks")
    args = p.parse_args()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    failed = 0
    for name in args.cases.split(","):
        try:
            globals()[name](args.out)
            print(f"{name}: ok", flush=True)
        except Exception as e:  # keep the others
            failed += 1
            print(f"{name} failed: {e!r}", file=sys.stderr, flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
