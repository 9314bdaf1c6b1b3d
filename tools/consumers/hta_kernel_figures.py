#!/usr/bin/env python3
"""hta_kernel_figures: HolisticTraceAnalysis's get_gpu_kernel_breakdown() on committed torch traces, the oracle of
the kernels frame's HTA columns (tools/python/tests/test_frames.py holds `Trace.kernels()` against them).

HTA is run with HTA_DISABLE_NS_ROUNDING=1 (torch's nanoseconds kept), every kernel its own row (num_kernels=10**6, no
"others"), memory kernels included; its kernel_metrics_df is written per trace with the count of each kernel it kept
(HTA drops what the last ProfilerStep launched), so that a test compares only the names whose calls it saw all of.
The traces hold two steps each: HTA keeps the first, which `Trace.kernels(step=...)` shows alone.

  VENV=build/consumers-venvs/pandas-latest   # made by tools/consumers/check_consumers.sh, with HTA 0.5.0
  $VENV/bin/python tools/consumers/hta_kernel_figures.py --out common/trace/tests/data/torch211_nccl/hta_kernels.json
"""
import argparse
import contextlib
import io
import json
import logging
import os
import sys
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACES = {
    "nccl_ddp": "common/trace/tests/data/torch211_nccl/ddp",
    "user_ranks": "common/trace/tests/data/torch211_user/ranks",
}


def kernels(trace_dir):
    from hta.trace_analysis import TraceAnalysis

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        ta = TraceAnalysis(trace_dir=trace_dir)
        _, metrics = ta.get_gpu_kernel_breakdown(visualize=False, num_kernels=10**6, duration_ratio=1.0,
                                                 include_memory_kernels=True)
    kept = {}
    for rank, df in ta.t.traces.items():
        names = df[df["stream"].ne(-1)]["name"].map(ta.t.symbol_table.get_sym_table().__getitem__)
        kept[str(rank)] = {str(k): int(v) for k, v in names.value_counts().items()}
    return json.loads(metrics.to_json(orient="records")), kept


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    import hta
    import pandas

    out = {"command": "tools/consumers/hta_kernel_figures.py --out " + os.path.relpath(args.out, REPO),
           "hta_version": getattr(hta, "__version__", "0.5.0"), "pandas_version": pandas.__version__,
           "python": sys.version.split()[0], "traces": {}}
    for key, path in TRACES.items():
        metrics, kept = kernels(os.path.join(REPO, path))
        out["traces"][key] = {"path": path, "kernel_metrics": metrics, "kept": kept}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
