"""The blog's GeGLU MLP forward split over the GPUs of one host by PyTorch itself: the side chapter 07 stands beside.

    torchrun --nproc-per-node 2 07_tp_mlp/torch_tp.py --out DIR [--batch 64 --seq 128 --dim 768 --hidden 3072]

The forwards, each timed on every rank as 07_tp_mlp times its own (CUDA events on the rank's compute stream around
one forward, the L2 flushed by reading twice its size before each, 5 warm-up runs, median of 50), then printed in
one table by rank 0 in 07's format (the slower rank's median first, every rank's in brackets):
  one GPU       the plain MLP with all of H on each GPU alone (nn.Linear, F.gelu(approximate="tanh"), the product);
  tp            PyTorch's tensor parallelism API: parallelize_module with ColwiseParallel for gate_proj and up_proj
                and RowwiseParallel for down_proj (the TP tutorial's plan: one all-reduce of y inside down_proj);
  tp by hand    the same plan without DTensor: this rank's shards (rows of W_gate and W_up, columns of W_down) and
                one dist.all_reduce of y, as Megatron writes it: 07's `tp` in PyTorch;
  chunked       the shards by hand, the rows in --chunks chunks, each chunk's all-reduce issued with async_op=True
                (it runs on the process group's NCCL stream) while the next chunk's GEMMs run: 07's `overlap`;
  ..., CUDA graph   the hand-made two replayed from a CUDA graph (NCCL's collectives can be captured): no host work
                between kernels, as 07's graph rows.
tp and chunked are also recorded under torch.profiler into DIR/torch_tp_<mode>_b.._np<N>/, one rank<r>.*.pt.trace.json
per rank (tensorboard_trace_handler), for `ladder-trace ranks` and HTA.
"""
import argparse
import os
import statistics
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module


class SimpleGeGLUMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.gelu(self.gate_proj(x), approximate="tanh") * self.up_proj(x))


def chunked_forward(x, w_gate, w_up, w_down, chunks):
    """This rank's shard (rows of W_gate and W_up, columns of W_down), chunk by chunk; y's all-reduces overlap."""
    ys, works = [], []
    for xc in x.chunk(chunks, dim=0):
        y = F.linear(F.gelu(F.linear(xc, w_gate), approximate="tanh") * F.linear(xc, w_up), w_down)
        works.append(dist.all_reduce(y, async_op=True))
        ys.append(y)
    for w in works:
        w.wait()
    return torch.cat(ys)


def tp_by_hand(x, w_gate, w_up, w_down):
    y = F.linear(F.gelu(F.linear(x, w_gate), approximate="tanh") * F.linear(x, w_up), w_down)
    dist.all_reduce(y)
    return y


def graphed(forward):
    """forward captured in a CUDA graph (after warm-up runs on a side stream, as torch.cuda.graph asks); its replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            forward()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        forward()
    return graph.replay


def time_forward(forward, runs=50, warmup=5):
    flush = torch.zeros(torch.cuda.get_device_properties(0).L2_cache_size // 2, dtype=torch.float32, device="cuda")
    times = []
    for i in range(warmup + runs):
        flush.sum()
        dist.barrier()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        forward()
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def record(forward, folder, rank):
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    handler = torch.profiler.tensorboard_trace_handler(str(folder), worker_name=f"rank{rank}")
    with torch.profiler.profile(activities=activities, schedule=schedule, record_shapes=True,
                                on_trace_ready=handler) as prof:
        for _ in range(5):
            with torch.profiler.record_function("mlp_fwd"):
                forward()
            torch.cuda.synchronize()
            prof.step()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the rank folders")
    for name, default in (("batch", 64), ("seq", 128), ("dim", 768), ("hidden", 3072), ("chunks", 2)):
        parser.add_argument(f"--{name}", type=int, default=default)
    args = parser.parse_args()
    rank, world = int(os.environ.get("RANK", -1)), int(os.environ.get("WORLD_SIZE", 0))
    if rank < 0 or not torch.cuda.is_available() or torch.cuda.device_count() < world:
        raise SystemExit("torch_tp.py: start it with torchrun on a host with a GPU per rank "
                         "(torchrun --nproc-per-node N 07_tp_mlp/torch_tp.py --out DIR)")
    if args.hidden % world:
        raise SystemExit(f"torch_tp.py: hidden = {args.hidden} does not split over {world} ranks")
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    mesh = init_device_mesh("cuda", (world,))
    torch.manual_seed(0)
    full = SimpleGeGLUMLP(args.dim, args.hidden).to("cuda", torch.bfloat16)
    x = torch.empty(args.batch * args.seq, args.dim, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    shard = args.hidden // world
    rows = slice(rank * shard, (rank + 1) * shard)
    w_gate, w_up = full.gate_proj.weight[rows].contiguous(), full.up_proj.weight[rows].contiguous()
    w_down = full.down_proj.weight[:, rows].contiguous()
    tp = parallelize_module(SimpleGeGLUMLP(args.dim, args.hidden).to("cuda", torch.bfloat16), mesh,
                            {"gate_proj": ColwiseParallel(), "up_proj": ColwiseParallel(),
                             "down_proj": RowwiseParallel()})

    by_hand = lambda: tp_by_hand(x, w_gate, w_up, w_down)
    chunked = lambda: chunked_forward(x, w_gate, w_up, w_down, args.chunks)
    forwards = {
        "one GPU (eager, all of H)": lambda: full(x),
        f"tp (PyTorch TP API, {world} GPUs)": lambda: tp(x),
        f"tp by hand ({world} GPUs)": by_hand,
        f"chunked ({world} GPUs, {args.chunks} chunks)": chunked,
    }
    with torch.no_grad():
        # The hand-made shards must add up to the full MLP (bf16: sums in another order, so a tolerance).
        for f in (by_hand, chunked):
            torch.testing.assert_close(f(), full(x), rtol=2e-2, atol=2e-2)
        tag = f"b{args.batch}_s{args.seq}_d{args.dim}_h{args.hidden}_np{world}"
        record(lambda: tp(x), args.out / f"torch_tp_tp_{tag}", rank)
        record(chunked, args.out / f"torch_tp_chunked_{tag}", rank)
        forwards[f"tp by hand ({world} GPUs), CUDA graph"] = graphed(by_hand)
        forwards[f"chunked ({world} GPUs, {args.chunks} chunks), CUDA graph"] = graphed(chunked)
        medians = {name: time_forward(f) for name, f in forwards.items()}
    every = [None] * world
    dist.all_gather_object(every, medians)
    if rank == 0:
        print(f"torch {torch.__version__}, {world} x {torch.cuda.get_device_name(0)}, batch {args.batch}, seq "
              f"{args.seq}, dim {args.dim}, hidden {args.hidden}, bf16; CUDA events, median of 50, cold L2")
        one = max(m["one GPU (eager, all of H)"] for m in every)
        for name in medians:
            per_rank = [m[name] for m in every]
            print(f"    {name:<48} {max(per_rank):7.1f} us   {one / max(per_rank):.2f}x one GPU   "
                  f"[{' / '.join(f'{t:.1f}' for t in per_rank)}]")
    # No destroy_process_group: with collectives captured in CUDA graphs on the communicator, it waited forever in our
    # runs (torch 2.11, 2 x H100). The table is out; the process ends here, and the driver frees the GPUs.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
