#!/usr/bin/env python3
"""traceinsight_figures: traceinsight's (HolisticTraceAnalysis's) figures for the committed traces, the oracle of
ladder-trace's idle time, launch statistics, frequent kernel sequences and critical path
(common/trace/tests/cpu_traceinsight_oracle_test.cpp holds ours against them).

For each trace (a folder is one run, one file per rank; a single file is rank 0), with HTA_DISABLE_NS_ROUNDING=1 so
that traceinsight keeps torch's nanoseconds, it runs
  get_idle_time_breakdown           GPU idle time per stream, by cause (host wait, kernel wait, other), every rank
  get_cuda_kernel_launch_stats      per correlation id: cpu_duration, gpu_duration, launch_delay, every rank
  get_frequent_cuda_kernel_sequences  operator "ProfilerStep", min_pattern_len 1, rank 0
  critical_path_analysis            rank 0, annotation "ProfilerStep", each step: the path's length and its
                                    breakdown by what bounds it
and writes them, with the versions and the command, to one JSON file.

  python3 -m venv /tmp/ti && /tmp/ti/bin/pip install traceinsight==0.6.1
  /tmp/ti/bin/python tools/consumers/traceinsight_figures.py --out common/trace/tests/data/traceinsight/figures.json

tools/consumers/check_consumers.sh runs it with traceinsight 0.6.1 pinned and compares (--compare NOW COMMITTED) its
figures of today with the committed file.
"""
import argparse
import contextlib
import io
import json
import logging
import os
import shutil
import sys
import tempfile
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REF = "traces/reference/h100"
DATA = "common/trace/tests/data"
# Every single-file trace of the ladder's (ProfilerStep#2..#4 each), two folders of ranks of chapter 07, and four of
# torch's own recordings (torch 2.11: a transformer's forward and backward, two streams; and two H100 recordings).
TRACES = sorted(f"{REF}/{f}" for f in os.listdir(os.path.join(REPO, REF)) if f.endswith(".json")) + [
    f"{REF}/07_tp_mlp_tp_b64_s128_d768_h3072_np2",
    f"{REF}/07_tp_mlp_overlap_b256_s128_d768_h3072_np2",
    f"{DATA}/torch211/transformer_fwd_bwd.json",
    f"{DATA}/torch211/two_streams.json",
    f"{DATA}/torch_02_linear_eager_h100.json",
    f"{DATA}/torch_03_simple_mlp_compiled_h100.json",
]


def records(df):
    return json.loads(df.to_json(orient="records"))


def figures(trace_dir, out_dir):
    from hta.trace_analysis import TraceAnalysis

    out = {}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        ta = TraceAnalysis(trace_dir=trace_dir)
        ranks = sorted(ta.t.traces.keys())
        out["ranks"] = ranks
        out["idle_time"] = records(ta.get_idle_time_breakdown(ranks=ranks, visualize=False)[0])
        stats = ta.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
        out["launch_stats"] = {str(r): records(df) for r, df in stats.items()}
        try:
            seq = ta.get_frequent_cuda_kernel_sequences("ProfilerStep", out_dir, min_pattern_len=1, visualize=False)
            out["kernel_sequences"] = records(seq)
        except Exception as e:
            out["kernel_sequences"] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        steps = sorted({n for n in ta.t.symbol_table.get_sym_table() if n.startswith("ProfilerStep#")},
                       key=lambda n: int(n.split("#")[1]))
        paths = {}
        for k, name in enumerate(steps):
            try:
                res = ta.critical_path_analysis(rank=ranks[0], annotation="ProfilerStep", instance_id=k)
                if res is None:
                    paths[name] = {"error": "none"}
                    continue
                cp, ok = res
                edf = cp.get_critical_path_breakdown()
                paths[name] = {
                    "ok": bool(ok),
                    "length_us": float(edf.duration.sum()) if edf is not None else None,
                    "by": {b: float(v) for b, v in edf.groupby("bound_by").duration.sum().items()} if edf is not None
                    else {},
                }
            except Exception as e:
                paths[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        out["critical_path"] = paths
    return out


def same(a, b, where, diffs):
    """Appends to diffs every place where a and b differ (numbers: by more than 1e-6)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in ("command", "pandas_version", "python"):
                continue
            if k not in a or k not in b:
                diffs.append(f"{where}/{k}: only in one")
            else:
                same(a[k], b[k], f"{where}/{k}", diffs)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append(f"{where}: {len(a)} rows against {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]", diffs)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if abs(a - b) > 1e-6:
            diffs.append(f"{where}: {a} against {b}")
    elif a != b:
        diffs.append(f"{where}: {str(a)[:80]} against {str(b)[:80]}")


def compare(now, committed):
    with open(now) as f:
        a = json.load(f)
    with open(committed) as f:
        b = json.load(f)
    diffs = []
    same(a, b, "", diffs)
    for d in diffs[:20]:
        print("traceinsight figures differ:", d)
    print(f"traceinsight {a.get('traceinsight_version')}: {len(a.get('traces', {}))} traces, "
          f"{'the same figures as' if not diffs else f'{len(diffs)} differences from'} {committed}")
    return 1 if diffs else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out")
    p.add_argument("--compare", nargs=2, metavar=("NOW", "COMMITTED"), help="compare two files this wrote")
    p.add_argument("--only", default="", help="only traces whose path holds this")
    args = p.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if not args.out:
        p.error("--out or --compare is needed")
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    import pandas
    from importlib.metadata import version

    out = {
        "traceinsight_version": version("traceinsight"),
        "pandas_version": pandas.__version__,
        "python": sys.version.split()[0],
        "command": "tools/consumers/traceinsight_figures.py --out " + os.path.relpath(os.path.abspath(args.out), REPO),
        "traces": {},
    }
    for rel in TRACES:
        if args.only not in rel:
            continue
        src = os.path.join(REPO, rel)
        with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as o:
            if os.path.isdir(src):
                for f in os.listdir(src):
                    if f.endswith(".gz") or f.endswith(".json"):
                        shutil.copy(os.path.join(src, f), d)
            else:
                shutil.copy(src, os.path.join(d, "rank0.json"))
            try:
                out["traces"][rel] = figures(d, o)
            except Exception as e:
                out["traces"][rel] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        print(rel, "done", file=sys.stderr)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
