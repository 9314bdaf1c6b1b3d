#!/usr/bin/env python3
"""torch_vs_ladder: the blog's PyTorch models next to our chapters, measured the same way.

For each model (01 matmul + add, 02 nn.Linear, 03 GeGLU MLP) and mode (eager, compiled / fused, CUDA graph) it runs
the PyTorch version in this process and our chapter as a subprocess, and reads both traces with ONE parser:
  - kernels per step and their names,
  - GPU time per forward: the mean, over the profiler's active steps, of the summed kernel + memset + memcpy time,
  - host time per forward: the median of 200 calls with the profiler off, timed around the call only.
A second section times the MLP's elementwise kernels (PyTorch eager gelu, mul, and torch.compile's fused gelu*mul)
the way build/bench/bench_elementwise times ours, against a copy of the same bytes.

PyTorch runs under torch.no_grad(): our chapters are forward-only, so autograd bookkeeping would not be a fair cost.

Run (from the repository root, after building):  python3 bench/torch_vs_ladder.py [--build build] [--out FILE]
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import shutil
import tempfile
import time
from pathlib import Path

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except (ImportError, OSError):  # OSError: a torch whose shared libraries do not load
    print("error: torch_vs_ladder.py needs PyTorch with CUDA (pip install torch)", file=sys.stderr)
    sys.exit(2)

REPO = Path(__file__).resolve().parent.parent
GPU_CATS = ("kernel", "gpu_memset", "gpu_memcpy")


# ---------------------------------------------------------------- trace parsing (PyTorch's traces and ours alike)
def parse_trace(path):
    """Per-step kernel count, kernel names (of the first step) and GPU time of a Kineto-format trace."""
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    steps = sorted((e for e in events
                    if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    if not steps:
        raise ValueError(f"{path}: no ProfilerStep# ranges")
    # A GPU event belongs to the step in which its launch call (same args.correlation) started on the CPU: the
    # kernel itself may run after the step's range has closed on the CPU.
    launch_ts = {}
    for e in events:
        corr = e.get("args", {}).get("correlation")
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and corr is not None:
            launch_ts[corr] = min(e["ts"], launch_ts.get(corr, e["ts"]))
    per_step = [{"kernels": [], "gpu_us": 0.0} for _ in steps]
    for e in sorted((e for e in events if e.get("cat") in GPU_CATS), key=lambda e: e["ts"]):
        t = launch_ts.get(e.get("args", {}).get("correlation"), e["ts"])  # no launch found: the event's own start
        for s, step in zip(per_step, steps):
            if step["ts"] <= t < step["ts"] + step["dur"]:
                s["gpu_us"] += e["dur"]
                if e["cat"] == "kernel":  # memsets and memcpys count in GPU time, not as kernels
                    s["kernels"].append(e["name"])
                break
    counts = [len(s["kernels"]) for s in per_step]
    return {
        "kernels": str(counts[0]) if min(counts) == max(counts) else f"{min(counts)}-{max(counts)}",
        "names": per_step[0]["kernels"],
        "gpu_us": statistics.mean(s["gpu_us"] for s in per_step),
    }


# ---------------------------------------------------------------- the PyTorch side
def matmul_add(x, w, b):  # 01: the blog's part 1
    return torch.add(torch.matmul(x, w), b)


class SimpleGeGLUMLP(nn.Module):  # 03: the blog's MLP, as written there
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        g = self.gate_proj(x)
        u = self.up_proj(x)
        h = F.gelu(g, approximate="tanh")
        m = h * u
        return self.down_proj(m)


def make_forward(model, mode):
    """A no-argument callable running one forward of `model` ("01-64", "01-4096", "02", "03") in `mode`."""
    cuda = dict(device="cuda")
    if model.startswith("01"):
        n = int(model.split("-")[1])
        x, w, b = (torch.randn(n, n, **cuda), torch.randn(n, n, **cuda), torch.randn(n, **cuda))  # float32
        fn, args = matmul_add, (x, w, b)
    elif model == "02":
        fn = nn.Linear(32, 64, device="cuda", dtype=torch.bfloat16)
        args = (torch.randn(1024, 32, device="cuda", dtype=torch.bfloat16),)
    else:
        fn = SimpleGeGLUMLP(768, 3072).to("cuda", torch.bfloat16)
        args = (torch.randn(64, 128, 768, device="cuda", dtype=torch.bfloat16),)

    if mode == "compiled":
        torch._dynamo.reset()  # a fresh compile per row: no recompiles, no "dynamic shape" kernel from an earlier row
        fn = torch.compile(fn, dynamic=False)
        for _ in range(3):  # compile (slow) and warm up before anything is timed or profiled
            fn(*args)
        torch.cuda.synchronize()
        return lambda: fn(*args)
    if mode == "graph":
        # Warm up on a side stream (cuBLAS picks its kernels, the allocator fills its pool), then capture one forward.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn(*args)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn(*args)
        torch.cuda.synchronize()
        return graph.replay  # replays the captured kernels on the same (static) input and output buffers
    return lambda: fn(*args)


def host_time_us(forward, reps):
    """Median host time of one forward call, in microseconds: the clock is around the call only."""
    for _ in range(5):
        forward()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        forward()
        t1 = time.perf_counter()
        torch.cuda.synchronize()  # outside the timing: each call starts with an idle GPU, as in our chapters
        times.append((t1 - t0) * 1e6)
    return statistics.median(times)


def profile_torch(forward, range_name, tmp):
    """Five steps under torch.profiler's schedule(wait=1, warmup=1, active=3); returns the parsed trace."""
    path = os.path.join(tmp, "trace.json")
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, schedule=schedule,
                                on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(5):
            with torch.profiler.record_function(range_name):
                forward()
            torch.cuda.synchronize()
            prof.step()
    if not os.path.exists(path):  # older torch may not call on_trace_ready when the schedule's cycle ends
        prof.export_chrome_trace(path)
    return parse_trace(path)


KEEP_TRACES = None  # --keep-traces


def run_torch(case, reps):
    try:
        forward = make_forward(case["model"], case["mode"])
        with tempfile.TemporaryDirectory() as tmp:
            row = profile_torch(forward, case["range"], tmp)
            if KEEP_TRACES:  # keep PyTorch's own trace file, e.g. as a test fixture
                KEEP_TRACES.mkdir(parents=True, exist_ok=True)
                shutil.copy(os.path.join(tmp, "trace.json"), KEEP_TRACES / f"torch_{case['model']}_{case['mode']}.json")
        row["host_us"] = host_time_us(forward, reps)
    except Exception as e:  # e.g. torch.compile without a working Triton: report the row, keep going
        print(f"--- PyTorch {case['label']} {case['mode']} failed: {e!r}", file=sys.stderr)
        row = {"failed": type(e).__name__}
    torch.cuda.empty_cache()
    return row


# ---------------------------------------------------------------- our side: the chapters' executables
HOST_LINE = re.compile(r"Host time per forward \(median of \d+, profiler off[^)]*\): ([\d.]+) us eager"
                       r"(?:, ([\d.]+) us replayed from a CUDA graph)?")


def run_ours(build, argv):
    """Runs build/<argv[0]> with --trace-dir a fresh folder; parses its one trace and its host-time line."""
    exe = build / argv[0]
    if not exe.exists():
        return {"failed": f"not built: {exe}"}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            p = subprocess.run([str(exe), *argv[1:], "--trace-dir", tmp], capture_output=True, text=True,
                               timeout=600)
        except subprocess.TimeoutExpired:
            print(f"--- {' '.join(argv)} ran past 600 s", file=sys.stderr)
            return {"failed": "timeout"}
        if p.returncode != 0:
            print(f"--- {' '.join(argv)} exited {p.returncode}; its stderr:\n{p.stderr}", file=sys.stderr)
            return {"failed": f"exit {p.returncode}"}
        traces = list(Path(tmp).glob("*.json"))
        host = HOST_LINE.search(p.stdout)
        if len(traces) != 1 or not host:
            print(f"--- {' '.join(argv)}: expected one trace and a host-time line, got {len(traces)} trace(s)",
                  file=sys.stderr)
            return {"failed": "no trace or host line"}
        row = parse_trace(traces[0])
    # With --graph the comparable figure is the replay (PyTorch's row times graph.replay()).
    row["host_us"] = float(host.group(2) or host.group(1))
    return row


# ---------------------------------------------------------------- the cases: one PyTorch row and one of ours each
def cases():
    out = []
    for n in (64, 4096):
        for mode, fused in (("eager", []), ("compiled", ["--fused"])):
            out.append(dict(model=f"01-{n}", label=f"01 matmul+add {n} fp32", mode=mode, range="matmul_add",
                            ours=["01_matmul_add", "--size", str(n), "--warmup", *fused]))
    lin = ["02_linear", "--batch", "1024", "--in_dim", "32", "--out_dim", "64"]
    for mode, extra in (("eager", []), ("compiled", []), ("graph", ["--graph"])):
        out.append(dict(model="02", label="02 Linear(32,64) bf16", mode=mode, range="linear_fwd", ours=lin + extra))
    mlp = ["--batch", "64", "--seq", "128", "--dim", "768", "--hidden", "3072"]
    for mode, exe, extra in (("eager", "03_simple_mlp", []), ("compiled", "03_fused_mlp", []),
                             ("graph", "03_fused_mlp", ["--graph"])):
        out.append(dict(model="03", label="03 GeGLU MLP bf16", mode=mode, range="mlp_fwd", ours=[exe, *mlp, *extra]))
    # 04: gate, up and gelu*mul in one GEMM; set beside 03_fused and torch.compile's rows just above (no PyTorch row
    # of its own: it would be torch.compile's again). Its Hopper variant on an sm_90 GPU, its portable one on any other
    # from sm_80 on; on an older GPU it refuses, and its row says "exit 2".
    out.append(dict(model="03", label="04 GeGLU MLP bf16, one GEMM", mode="compiled", range="mlp_fwd",
                    ours=["04_epilogue_mlp", *mlp], torch=False))
    return out


MODE_NAMES = {"eager": ("eager", "eager"), "compiled": ("torch.compile", "fused"),
              "graph": ("eager + CUDA graph", "replay (--graph)")}


def short(name, width=60):
    """A kernel name that fits a table: without `void ` and namespaces (so that PyTorch's functor shows), truncated."""
    name = re.sub(r"\b[a-z_0-9]+::", "", name.removeprefix("void "))
    return name if len(name) <= width else name[:width - 3] + "..."


def table_row(case, who, r):
    torch_mode, our_mode = MODE_NAMES[case["mode"]]
    ran = torch_mode if who == "PyTorch" else f"{our_mode}: `{' '.join(case['ours'])}`"
    if "failed" in r:
        return [case["label"], who, ran, "failed", "-", "-", r["failed"]]
    names = " + ".join(f"`{short(n)}`" for n in r["names"]).replace("|", "\\|") or "(none seen)"
    return [case["label"], who, ran, r["kernels"], f"{r['gpu_us']:.1f}", f"{r['host_us']:.1f}", names]


def markdown(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


# ---------------------------------------------------------------- elementwise kernels, timed like bench_elementwise
def time_kernel(fn, reps, flush):
    """Median and min kernel time in us: L2 flushed before each run, CUDA events around the call only."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for _ in range(5):  # warm-up runs
        flush.sum()
        fn()
    for start, stop in zip(starts, stops):
        flush.sum()  # a read: inputs come from HBM, not from an L2 the previous run warmed, and no line is dirty
        # Python (and torch.compile's wrapper) spend tens of us per call on the host; our C++ bench does not. A short
        # GPU spin, outside the events, keeps the GPU busy until the kernel is queued, so the events time the kernel
        # and not the host.
        torch.cuda._sleep(200_000)
        start.record()
        fn()
        stop.record()
    torch.cuda.synchronize()
    us = sorted(s.elapsed_time(e) * 1e3 for s, e in zip(starts, stops))
    return statistics.median(us), us[0]


def kernels_section(reps):
    rows_n, cols_n = 8192, 3072
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    g, u = torch.randn(rows_n, cols_n, **bf16), torch.randn(rows_n, cols_n, **bf16)
    h = F.gelu(g, approximate="tanh")
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 * 2**20)
    flush = torch.zeros(2 * l2 // 4, dtype=torch.float32, device="cuda")  # read, as GpuTimer reads its flush

    torch._dynamo.reset()
    fused = torch.compile(lambda g, u: F.gelu(g, approximate="tanh") * u, dynamic=False)
    for _ in range(3):
        fused(g, u)
    # A fast wrong kernel is not a result. Eager rounds gelu(g) to bf16 before the multiply; a compiled kernel may keep
    # it in float32, so the two may differ by about one bf16 rounding step.
    torch.testing.assert_close(fused(g, u), h * u, rtol=2e-2, atol=2e-2)

    def copy_of(bytes_moved):  # a device-to-device copy that reads and writes bytes_moved / 2 bytes
        src = torch.randn(bytes_moved // 4, **bf16)  # bytes_moved / 2 bytes as 2-byte elements
        dst = torch.empty_like(src)
        return lambda: dst.copy_(src)

    elem = g.element_size() * g.numel()  # bytes of one [8192, 3072] bf16 tensor
    runs = [("device-to-device copy", 2 * elem, None, copy_of(2 * elem)),
            ("PyTorch eager F.gelu(g, tanh)", 2 * elem, 2 * elem, lambda: F.gelu(g, approximate="tanh")),
            ("device-to-device copy", 3 * elem, None, copy_of(3 * elem)),
            ("PyTorch eager h * u", 3 * elem, 3 * elem, lambda: h * u),
            ("torch.compile gelu(g) * u (Triton)", 3 * elem, 3 * elem, lambda: fused(g, u))]
    copy_us, rows = {}, []
    for name, moved, vs_copy, fn in runs:
        med, low = time_kernel(fn, reps, flush)
        if vs_copy is None:
            copy_us[moved] = med
        pct = "-" if vs_copy is None else f"{100 * copy_us[vs_copy] / med:.1f}%"  # same bytes: time ratio = rate ratio
        rows.append([name, f"{moved / 1e6:.1f}", f"{med:.1f}", f"{low:.1f}", f"{moved / med / 1e3:.0f}", pct])
    header = ["kernel", "MB moved (read+written)", "median us", "min us", "GB/s", "% of copy rate"]
    return markdown(header, rows)


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", type=Path, default=REPO / "build", help="folder with the chapters' executables")
    ap.add_argument("--out", type=Path,
                    help="Markdown file to write (default: bench/results/torch_vs_ladder_<gpu>_<date>.md)")
    ap.add_argument("--no-kernels", dest="kernels", action="store_false", help="skip the elementwise-kernel section")
    ap.add_argument("--keep-traces", type=Path, help="copy each PyTorch trace into this folder")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (50 host calls, 20 kernel runs)")
    args = ap.parse_args()
    global KEEP_TRACES
    KEEP_TRACES = args.keep_traces
    if not torch.cuda.is_available():
        print("error: torch_vs_ladder.py needs a CUDA GPU, and torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    host_reps, kernel_reps = (50, 20) if args.quick else (200, 100)

    gpu = torch.cuda.get_device_name(0)
    today = datetime.date.today().isoformat()
    gpu_slug = re.sub(r"[^A-Za-z0-9]+", "-", gpu).strip("-")  # "NVIDIA H100 80GB HBM3" -> "NVIDIA-H100-80GB-HBM3"
    out = args.out or REPO / "bench" / "results" / f"torch_vs_ladder_{gpu_slug}_{today}.md"
    head = ["# PyTorch vs the ladder", "",
            f"- date: {datetime.datetime.now().isoformat(timespec='minutes')}",
            f"- GPU: {gpu}", f"- torch: {torch.__version__}", f"- CUDA (torch built with): {torch.version.cuda}",
            f"- host time: median of {host_reps} forward calls, profiler off; GPU time: mean over the 3 active "
            "profiler steps of kernel + memset + memcpy time; PyTorch under torch.no_grad()", ""]

    rows = []
    with torch.no_grad():
        for case in cases():
            print(f"running {case['label']} {case['mode']} ...", file=sys.stderr)
            if case.get("torch", True):
                rows.append(table_row(case, "PyTorch", run_torch(case, host_reps)))
            rows.append(table_row(case, "ours", run_ours(args.build, case["ours"])))
        header = ["model", "who", "mode", "kernels/step", "GPU us/fwd", "host us/fwd", "kernels (one step)"]
        text = "\n".join(head) + "\n## Forwards\n\n" + markdown(header, rows) + "\n"
        print("\n" + markdown(header, rows))
        if args.kernels:
            section = kernels_section(kernel_reps)
            text += (f"\n## Elementwise kernels at [8192, 3072] bf16\n\nL2 flushed before each run, CUDA events "
                     f"around the kernel only, median of {kernel_reps} runs after 5 warm-ups.\n\n{section}\n")
            print("\n" + section)

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
