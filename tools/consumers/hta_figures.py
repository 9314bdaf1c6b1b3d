#!/usr/bin/env python3
"""hta_figures: HolisticTraceAnalysis's figures for the committed torch traces, the oracle of ladder-trace's
`breakdown` and `ranks` (common/trace/tests/cpu_hta_oracle_test.cpp holds ours against them).

For each trace (a folder is one run, one file per rank; a single file is rank 0) it runs HTA's
  get_temporal_breakdown     GPU idle / compute / non-compute time per rank
  get_idle_time_breakdown    GPU idle time per rank and stream, by cause (host wait, kernel wait, other)
  get_comm_comp_overlap      % of communication kernel time that overlapped computation kernels, per rank
and writes them, with the GPU activities HTA kept (it drops some: see the test), the HTA and pandas versions and the
command, to one JSON file. Twice per trace: as HTA runs by default, which rounds every event to whole microseconds
(start rounded up, end down), and with HTA_DISABLE_NS_ROUNDING=1, which keeps torch's nanoseconds; the second is the
one ours can match to the nanosecond.

"streams_nccl" is the two-stream trace with the kernels of its second stream renamed "ncclDevKernel_AllReduce_Sum_f32"
(written to a temporary folder): no committed trace has NCCL kernels (the ranks run used gloo, which has no GPU side),
and this gives HTA's overlap figure two streams that really ran at once. The test renames them the same way.

  VENV=build/consumers-venvs/pandas-3.1.1   # made by tools/consumers/check_consumers.sh
  $VENV/bin/python tools/consumers/hta_figures.py --out common/trace/tests/data/torch211_user/hta_figures.json

--set nccl does the same for the real NCCL runs (bench/record_torch_ranks.py on 2 H100s): the DDP, tensor-parallel and
async folders, into common/trace/tests/data/torch211_nccl/hta_figures.json; --set nccl4 for the same runs on 4 H100s,
into common/trace/tests/data/torch211_nccl4/hta_figures.json.
"""
import argparse
import contextlib
import gzip
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = "common/trace/tests/data/torch211_user"
TRACES = {
    "streams": f"{DATA}/streams",
    "ranks": f"{DATA}/ranks",
    "streams_nccl": f"{DATA}/streams",  # renamed, see above
    "fused_mlp_h100": "traces/reference/h100/03_fused_mlp.json",
}
NCCL_NAME = "ncclDevKernel_AllReduce_Sum_f32"
NCCL_DATA = "common/trace/tests/data/torch211_nccl"
SETS = {"user": TRACES}
for name, folder in (("nccl", NCCL_DATA), ("nccl4", NCCL_DATA + "4")):
    SETS[name] = {run: f"{folder}/{run}" for run in ("ddp", "tp", "async")}


def second_stream_as_nccl(src_folder, dst_folder):
    """Copies the one trace of src_folder with the kernels of its second stream (by id) renamed NCCL_NAME."""
    (name,) = [f for f in os.listdir(src_folder) if f.endswith(".gz") or f.endswith(".json")]
    opener = gzip.open if name.endswith(".gz") else open
    with opener(os.path.join(src_folder, name), "rt") as f:
        doc = json.load(f)
    streams = sorted({e["args"]["stream"] for e in doc["traceEvents"] if e.get("cat") == "kernel"})
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel" and e["args"]["stream"] == streams[1]:
            e["name"] = NCCL_NAME
    with open(os.path.join(dst_folder, "rank0.json"), "w") as f:
        json.dump(doc, f)
    return streams[1]


def records(df):
    return json.loads(df.to_json(orient="records"))


def figures(trace_dir):
    """HTA's three analyses of the traces in trace_dir, as plain JSON."""
    from hta.trace_analysis import TraceAnalysis

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        ta = TraceAnalysis(trace_dir=trace_dir)
        temporal = ta.get_temporal_breakdown(visualize=False)
        idle = ta.get_idle_time_breakdown(visualize=False)[0]
        overlap = ta.get_comm_comp_overlap(visualize=False)
    sym = ta.t.symbol_table.get_sym_table()
    kept = {}
    for rank, df in ta.t.traces.items():
        gpu = df[df["stream"].ne(-1)]
        kept[str(rank)] = {
            "gpu_activities": int(len(gpu)),
            "first_ts_us": float(gpu["ts"].min()) + float(ta.t.min_ts),  # HTA shifts all ranks to start at 0
            "by_name": {n: int(c) for n, c in gpu["name"].map(lambda i: sym[i]).value_counts().sort_index().items()},
        }
    return {
        "temporal_breakdown": records(temporal),
        "idle_time_breakdown": records(idle),
        "comm_comp_overlap": records(overlap),
        "kept": kept,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--set", choices=sorted(SETS), default="user", help="which traces (default: user)")
    args = p.parse_args()
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    import hta
    import pandas

    out = {
        "hta_version": hta.__version__ if hasattr(hta, "__version__") else "",
        "pandas_version": pandas.__version__,
        "python": sys.version.split()[0],
        "command": "tools/consumers/hta_figures.py --out " + os.path.relpath(os.path.abspath(args.out), REPO)
        + ("" if args.set == "user" else " --set " + args.set),
        "nccl_renamed": NCCL_NAME,
        "traces": {},
    }
    try:
        from importlib.metadata import version

        out["hta_version"] = version("HolisticTraceAnalysis")
    except Exception:
        pass
    for key, rel in SETS[args.set].items():
        src = os.path.join(REPO, rel)
        entry = {"path": rel}
        with tempfile.TemporaryDirectory() as d:
            if key == "streams_nccl":
                entry["renamed_stream"] = second_stream_as_nccl(src, d)
            elif os.path.isdir(src):
                for f in os.listdir(src):
                    if f.endswith(".gz") or f.endswith(".json"):
                        shutil.copy(os.path.join(src, f), d)
            else:
                shutil.copy(src, os.path.join(d, "rank0.json"))
            for mode, flag in (("rounded_us", "0"), ("ns", "1")):
                os.environ["HTA_DISABLE_NS_ROUNDING"] = flag
                try:
                    entry[mode] = figures(d)
                except Exception as e:  # HTA cannot analyse this trace: say how, as a figure of its own
                    entry[mode] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        out["traces"][key] = entry
        print(key, "done", file=sys.stderr)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
