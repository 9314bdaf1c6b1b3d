#!/usr/bin/env python3
"""profile_mlp.py: the blog's GeGLU MLP under torch.profiler, PyTorch's way and with the ladder's ops.

The blog's shape (batch 64, seq 128, dim 768, hidden 3072, bf16, torch.no_grad()), five cases:
  eager           the blog's SimpleGeGLUMLP: three nn.Linear, F.gelu(tanh), *
  compile         torch.compile of it (Inductor fuses the GELU and the product into one Triton kernel)
  ladder          LadderGEGLUMLP: ladder::geglu_gemm (gate, up, GELU and product in one GEMM), then down_proj
  ladder_compile  the same module inside torch.compile (our op stays one call; Inductor schedules around it)
  ladder_gelu_mul LadderGEGLUMLP(fused=False): nn.Linear gate and up, then ladder::gelu_mul (what Liger's layer does)
Each case writes DIR/05_<case>.json (torch.profiler: wait 1, warmup 1, active 3 steps, one `mlp_fwd` range per
forward, input shapes recorded), DIR being traces/<gpu>/ (h100, h200, ...: beside the committed traces in
traces/reference/, never over them) unless --out-dir says otherwise,
and the script prints one table: kernels per step, GPU time per forward (CUDA events around the forward, L2 flushed
before each, median), host time per forward (median, profiler off), and then the host time of one op call, read from
the profiler's CPU events (ladder::geglu_gemm beside aten::mm).

Run (from the repository root, after building with -DLADDER_TORCH=ON; it finds the library in build/, or at
$LADDER_TORCH_LIB):
    python 05_torch_op/profile_mlp.py
Then: build/tools/ladder-trace summary traces/h100/05_ladder.json
"""
import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "05_torch_op"))
from torch_vs_ladder import SimpleGeGLUMLP, parse_trace, short  # noqa: E402  (one trace parser for every table)
try:
    import ladder_ops  # noqa: E402
except ImportError as e:
    sys.exit(f"error: {e}")

BATCH, SEQ, DIM, HIDDEN = 64, 128, 768, 3072
OPS = ("ladder::geglu_gemm", "ladder::gelu_mul", "aten::mm")  # the op calls whose host time the last table shows


class Config:  # the three fields of a Hugging Face config that LigerGEGLUMLP (and ours) read
    hidden_size, intermediate_size, hidden_act = DIM, HIDDEN, "gelu_pytorch_tanh"


def make_cases():
    """name -> a module taking x; all share the eager MLP's weights, so every output can be checked against it."""
    torch.manual_seed(0)
    eager = SimpleGeGLUMLP(DIM, HIDDEN).to("cuda", torch.bfloat16).eval()
    ours = ladder_ops.LadderGEGLUMLP(Config()).to("cuda", torch.bfloat16).eval()
    ours.load_state_dict(eager.state_dict())
    liger_style = ladder_ops.LadderGEGLUMLP(Config(), fused=False).to("cuda", torch.bfloat16).eval()
    liger_style.load_state_dict(eager.state_dict())
    return {"eager": eager, "compile": torch.compile(eager, dynamic=False), "ladder": ours,
            "ladder_compile": torch.compile(ours, dynamic=False, fullgraph=True), "ladder_gelu_mul": liger_style}


def gpu_us_per_forward(forward, reps=100):
    """Median GPU time of one forward: L2 flushed before each, CUDA events around the forward only. A GPU spin before
    the start event keeps the GPU busy while the host issues the forward, so the events see kernels, not host gaps."""
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 * 2**20)
    # Twice the L2, read (as the chapters' GpuTimer reads its flush): reading it evicts everything and leaves no dirty
    # line for the forward to write back.
    flush = torch.zeros(2 * l2 // 4, dtype=torch.float32, device="cuda")
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, stop in events:
        flush.sum()
        torch.cuda._sleep(2_000_000)  # ~1 ms at the H100's clock: longer than any case's host time per forward
        start.record()
        forward()
        stop.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(stop) * 1e3 for start, stop in events)


def host_us_per_forward(forward, reps=200):
    """Median host time of one forward call, profiler off; the GPU is drained between calls, outside the clock."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        forward()
        times.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def record(forward, path):
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, schedule=schedule, record_shapes=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(5):
            with torch.profiler.record_function("mlp_fwd"):
                forward()
            torch.cuda.synchronize()
            prof.step()


def op_host_us(path):
    """op name -> (calls per step, mean host us per call) from the trace's cpu_op events of the 3 active steps."""
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    out = {}
    for op in OPS:
        durs = [e["dur"] for e in events if e["name"] == op]
        if durs:
            out[op] = (len(durs) / 3, statistics.mean(durs))
    return out


def markdown(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in rows])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", "--trace-dir", type=Path, dest="out_dir",
                    help="folder for the traces (default: traces/<gpu>/); --trace-dir, as the chapters name it")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("error: profile_mlp.py needs a CUDA GPU, and torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    gpu = torch.cuda.get_device_name(0)
    folder = next((tag for tag in ("h100", "h200", "a100") if tag in gpu.lower()), re.sub(r"\W+", "_", gpu.lower()))
    out_dir = args.out_dir or REPO / "traces" / folder
    out_dir.mkdir(parents=True, exist_ok=True)

    x = torch.randn(BATCH, SEQ, DIM, device="cuda", dtype=torch.bfloat16)
    rows, op_rows = [], []
    with torch.no_grad():
        cases = make_cases()
        want = cases["eager"](x)
        for name, module in cases.items():
            forward = lambda: module(x)  # noqa: E731
            for _ in range(3):  # compile (slow) and warm up before anything is checked, timed or recorded
                forward()
            # A fast wrong forward is no result. Our GELU is within a bf16 step of PyTorch's (common/gpu/gelu.cuh).
            torch.testing.assert_close(forward(), want, atol=2e-2, rtol=2e-2, msg=f"case {name}")
            path = out_dir / f"05_{name}.json"
            record(forward, path)
            trace = parse_trace(path)
            names = " + ".join(short(n, 40) for n in trace["names"])
            rows.append([name, trace["kernels"], f"{gpu_us_per_forward(forward):.1f}",
                         f"{host_us_per_forward(forward):.1f}", names])
            op_rows += [[op, name, f"{calls:g}", f"{us:.1f}"] for op, (calls, us) in op_host_us(path).items()]
            print(f"written: {path}", file=sys.stderr)

    print(f"GPU: {gpu}; torch {torch.__version__} (CUDA {torch.version.cuda}); "
          f"MLP batch {BATCH}, seq {SEQ}, dim {DIM}, hidden {HIDDEN}, bf16")
    print(markdown(["case", "kernels/step", "GPU us/fwd (median of 100, L2 flushed)", "host us/fwd (median of 200)",
                    "kernels (one step)"], rows))
    print()
    print(markdown(["op", "case", "calls/step", "host us/call (profiler's CPU events, mean of 3 steps)"], op_rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
