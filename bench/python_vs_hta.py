#!/usr/bin/env python3
"""python_vs_hta: one trace loaded from Python, then its kernels and its time breakdown, by ladder_trace (the C++
reader behind pandas, tools/python: load, kernels, breakdown and HTA's temporal_breakdown) and by
HolisticTraceAnalysis (HTA 0.5.0: load, get_gpu_kernel_breakdown, get_temporal_breakdown). Prints the seconds of each
stage and the frames' sizes; run it under `/usr/bin/time -v` for the peak memory, one library per process.

  python bench/python_vs_hta.py ladder /tmp/big1g.json      # in a virtualenv with `pip install ./tools/python`
  python bench/python_vs_hta.py hta /tmp/big1g.json         # in one with HolisticTraceAnalysis 0.5.0

HTA reads a folder: it is given a folder holding only the trace (a symbolic link to it), and HTA_DISABLE_NS_ROUNDING=1
(its temporal breakdown raises on sub-microsecond kernels with its default rounding to whole microseconds).
"""
import os
import sys
import tempfile
import time


def stage(name, fn):
    t0 = time.perf_counter()
    out = fn()
    print(f"{name}: {time.perf_counter() - t0:.2f} s", flush=True)
    return out


def ladder(path):
    import ladder_trace as lt

    t = stage("load", lambda: lt.load(path))
    kernels = stage("kernels", t.kernels)
    breakdown = stage("breakdown", t.breakdown)
    temporal = stage("temporal_breakdown", t.temporal_breakdown)  # HTA's own frame
    print(f"kernels: {len(kernels)} rows; breakdown: {len(breakdown)} rows")
    print(kernels[["name", "calls", "sum (us)"]].head(3).to_string(max_colwidth=60))
    print(breakdown.tail(1).to_string())
    print(temporal.to_string())


def hta(path):
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    folder = tempfile.mkdtemp()
    os.symlink(os.path.abspath(path), os.path.join(folder, os.path.basename(path)))
    from hta.trace_analysis import TraceAnalysis

    ta = stage("load", lambda: TraceAnalysis(trace_dir=folder))
    kernel_type, kernel_metrics = stage("get_gpu_kernel_breakdown",
                                        lambda: ta.get_gpu_kernel_breakdown(visualize=False))
    temporal = stage("get_temporal_breakdown", lambda: ta.get_temporal_breakdown(visualize=False))
    print(f"kernel_metrics: {len(kernel_metrics)} rows; temporal: {len(temporal)} rows")
    print(kernel_metrics.head(3).to_string(max_colwidth=60))
    print(kernel_type.to_string())
    print(temporal.to_string())


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("ladder", "hta"):
        sys.exit(__doc__)
    t0 = time.perf_counter()
    {"ladder": ladder, "hta": hta}[sys.argv[1]](sys.argv[2])
    print(f"total: {time.perf_counter() - t0:.2f} s")
