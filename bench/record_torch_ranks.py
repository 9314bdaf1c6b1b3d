#!/usr/bin/env python3
"""record_torch_ranks: real NCCL runs recorded by torch.profiler, one trace per rank, as test data for `ladder-trace
ranks` and the multi-rank pictures.

Two runs, each a folder of rank traces written by tensorboard_trace_handler, with each rank's
key_averages().table(sort_by="cuda_time_total") in rank<R>.txt beside them:
  - ddp/  DDP training of a few GeGLU blocks (d 768, hidden 3072, bf16): forward, backward (DDP's bucketed NCCL
          all-reduces of the gradients), SGD step. The last rank gets a larger batch, so the others wait for it in
          every all-reduce: it is the straggler a reader should find. Plain .json.
  - tp/   the blog's MLP split over the ranks (x 8192 x 768, hidden 3072, bf16): gate and up column-parallel (each rank
          a slice of the hidden units), down row-parallel (the matching slice of K), one all_reduce of y. Forward only;
          y is checked against the unsplit MLP before profiling. .json.gz.
  - async/ DDP of 2 GeGLU blocks plus, each step, an all_reduce with async_op=True on a second process group (its own
          communicator and NCCL stream), waited for in the next step; no synchronize at the end of a step, so kernels
          run after the CPU step that launched them ended. The ranks' capture windows differ as they do when ranks
          start their profilers at different steps: rank 0 records ProfilerStep#1 to #3, the others #2 and #3, so
          rank 0's trace holds collectives the others' do not. .json.gz.

Run on a machine with N GPUs (N >= 2), NCCL, NVLink multicast off:
  NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \\
      torchrun --nproc-per-node N bench/record_torch_ranks.py --out DIR
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

ACT = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
D, H, M = 768, 3072, 8192


class GeGLUBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(D, H, bias=False)
        self.up = nn.Linear(D, H, bias=False)
        self.down = nn.Linear(H, D, bias=False)

    def forward(self, x):
        return x + self.down(F.gelu(self.gate(x), approximate="tanh") * self.up(x))


def write_table(d, rank, world, what, prof):
    with open(os.path.join(d, f"rank{rank}.txt"), "w") as f:
        f.write(f"# torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
                f"{torch.cuda.get_device_name()}, rank {rank} of {world}, {what}\n")
        f.write(prof.key_averages().table(sort_by="cuda_time_total", row_limit=-1) + "\n")


def ddp(out, rank, world, blocks=3, steps=4):
    d = os.path.join(out, "ddp")
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(0)
    model = DDP(nn.Sequential(*[GeGLUBlock() for _ in range(blocks)]).cuda().bfloat16(), device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    rows = 2048 * (2 if rank == world - 1 else 1)  # the last rank has twice the tokens: the others wait for it
    torch.manual_seed(1 + rank)
    x = torch.randn(rows, D, device="cuda", dtype=torch.bfloat16)
    for _ in range(2):  # NCCL's first collectives set up channels; keep them out of the recorded steps
        model(x).float().square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    with profile(activities=ACT, schedule=schedule(wait=1, warmup=1, active=steps - 2, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(d, worker_name=f"rank{rank}")) as prof:
        for _ in range(steps):
            model(x).float().square().mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            prof.step()
    write_table(d, rank, world, f"DDP of {blocks} GeGLU blocks, {rows} x {D} tokens on this rank, bf16", prof)


def tp(out, rank, world, steps=5):
    d = os.path.join(out, "tp")
    os.makedirs(d, exist_ok=True)
    assert H % world == 0
    torch.manual_seed(0)  # every rank draws the same full weights and x, then keeps its slice
    x = torch.randn(M, D, device="cuda", dtype=torch.bfloat16)
    wg = torch.randn(H, D, device="cuda", dtype=torch.bfloat16) * D ** -0.5
    wu = torch.randn(H, D, device="cuda", dtype=torch.bfloat16) * D ** -0.5
    wd = torch.randn(D, H, device="cuda", dtype=torch.bfloat16) * H ** -0.5
    s = slice(rank * H // world, (rank + 1) * H // world)
    g, u, dn = wg[s].contiguous(), wu[s].contiguous(), wd[:, s].contiguous()

    def forward():
        y = F.linear(F.gelu(F.linear(x, g), approximate="tanh") * F.linear(x, u), dn)
        dist.all_reduce(y)
        return y

    ref = F.linear(F.gelu(F.linear(x.float(), wg.float()), approximate="tanh") * F.linear(x.float(), wu.float()),
                   wd.float())
    y = forward().float()
    err = ((y - ref).abs() / (0.02 + 0.02 * ref.abs())).max().item()
    ok = bool(torch.isfinite(y).all()) and err <= 1.0
    print(f"tp rank {rank}: y vs the unsplit float32 MLP: max |y-ref|/(0.02+0.02|ref|) = {err:.3f} "
          f"({'ok' if ok else 'MISMATCH'})", flush=True)
    if not ok:
        raise SystemExit(1)
    for _ in range(2):
        forward()
    torch.cuda.synchronize()
    with profile(activities=ACT, schedule=schedule(wait=1, warmup=1, active=steps - 2, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(d, worker_name=f"rank{rank}", use_gzip=True)) as prof:
        for _ in range(steps):
            forward()
            torch.cuda.synchronize()
            prof.step()
    write_table(d, rank, world, f"tensor-parallel GeGLU MLP forward, x {M} x {D}, hidden {H // world} of {H}, bf16",
                prof)


def async_pg(out, rank, world, blocks=2, steps=4):
    d = os.path.join(out, "async")
    os.makedirs(d, exist_ok=True)
    side = dist.new_group(ranks=list(range(world)))  # a second process group: its own communicator and stream
    torch.manual_seed(0)
    model = DDP(nn.Sequential(*[GeGLUBlock() for _ in range(blocks)]).cuda().bfloat16(), device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    torch.manual_seed(1 + rank)
    x = torch.randn(2048, D, device="cuda", dtype=torch.bfloat16)
    stat = torch.zeros(1 << 20, device="cuda")
    for _ in range(2):
        model(x).float().square().mean().backward()
        dist.all_reduce(stat, group=side)
    torch.cuda.synchronize()
    sched = schedule(wait=0, warmup=1, active=steps - 1) if rank == 0 else schedule(wait=1, warmup=1,
                                                                                      active=steps - 2)
    pending = None
    with profile(activities=ACT, schedule=sched,
                 on_trace_ready=tensorboard_trace_handler(d, worker_name=f"rank{rank}", use_gzip=True)) as prof:
        for _ in range(steps):
            if pending is not None:
                pending.wait()
            loss = model(x).float().square().mean()
            loss.backward()
            stat.fill_(loss.detach())
            pending = dist.all_reduce(stat, group=side, async_op=True)
            opt.step()
            opt.zero_grad(set_to_none=True)
            prof.step()
        pending.wait()
    torch.cuda.synchronize()
    write_table(d, rank, world, f"DDP of {blocks} GeGLU blocks and an async all_reduce on a second process group, "
                f"{'ProfilerStep#1-#3' if rank == 0 else 'ProfilerStep#2-#3'} recorded", prof)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--cases", default="ddp,tp,async_pg")
    args = p.parse_args()
    for v in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
        if os.environ.get(v) is None:
            raise SystemExit(f"{v} is not set: keep NVLink multicast off (see the docstring)")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    if rank == 0:
        print(f"torch {torch.__version__} on {world} x {torch.cuda.get_device_name()}", flush=True)
    for case in args.cases.split(","):
        globals()[case](args.out, rank, world)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
