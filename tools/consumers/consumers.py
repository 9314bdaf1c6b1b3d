#!/usr/bin/env python3
"""Runs the analyses of two tools that read PyTorch's traces on any trace, and prints one JSON line per trace:
{"trace": path, "checks": {name: {"ok": bool, "detail": str}}}. check_consumers.sh runs it in a virtualenv with the
tools installed, on our reference traces and on PyTorch's, and compares.

    python3 consumers.py [--no-tb] TRACE.json [...] > ENV.jsonl    (in a virtualenv with the tools)
    python3 consumers.py --compare ENV1.jsonl [ENV2.jsonl ...]        (any python3: prints the table, exit 1 if
                                                                      one of our traces fails where PyTorch's passes)

The checks, each on its own so that one failure does not hide the others:
  hta_load              HolisticTraceAnalysis's TraceAnalysis loads the trace (as rank 0)
  hta_kernel_breakdown  get_gpu_kernel_breakdown: time per kernel type, non-empty
  hta_idle_time         get_idle_time_breakdown: idle time per stream, non-empty
  hta_aten_op_kernels   get_aten_op_kernels_and_delay: which kernels each aten:: op launched, non-empty
  hta_call_graph        CallGraph: the op call stacks, at least one
  tb_load               torch-tb-profiler's parser and run generator (what TensorBoard's plugin does on load)
  tb_operator_view      its operator table, non-empty
  tb_kernel_view        its kernel table, non-empty
  tb_gemm_tensor_cores  every GEMM op (mm, matmul, linear, addmm, bmm) is "Tensor Cores eligible" in the operator table
"""
import contextlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import traceback
import warnings

warnings.filterwarnings("ignore")
GEMM_OP = re.compile(r"^(aten::)?(mm|matmul|linear|addmm|bmm|baddbmm)$")


def run(checks, name, fn):
    """Runs one check; a result of False or an exception is a failure, a string is the detail of a pass."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            r = fn()
        ok = r is not False and not (isinstance(r, tuple) and r[0] is False)
        detail = r[1] if isinstance(r, tuple) else (r if isinstance(r, str) else "")
        checks[name] = {"ok": ok, "detail": detail}
    except Exception as e:  # noqa: BLE001 -- any exception is the tool failing on this trace
        last = traceback.extract_tb(e.__traceback__)[-1]
        where = f"{os.path.basename(last.filename)}:{last.lineno}"
        checks[name] = {"ok": False, "detail": f"{type(e).__name__}: {str(e)[:200]} (at {where})"}
    return checks[name]["ok"]


def hta_checks(path, checks):
    from hta.trace_analysis import TraceAnalysis
    from hta.common.call_stack import CallGraph

    d = tempfile.mkdtemp()
    try:
        f = os.path.join(d, "rank0.json")
        shutil.copy(path, f)
        box = {}

        def load():
            box["ta"] = TraceAnalysis(trace_files={0: f}, trace_dir=d)

        if not run(checks, "hta_load", load):
            for n in ("hta_kernel_breakdown", "hta_idle_time", "hta_aten_op_kernels", "hta_call_graph"):
                checks[n] = {"ok": False, "detail": "trace did not load"}
            return
        ta = box["ta"]

        def kernels():
            df = ta.get_gpu_kernel_breakdown(visualize=False)[0]
            return (len(df) > 0, f"{len(df)} kernel types")

        def idle():
            df = ta.get_idle_time_breakdown(visualize=False)[0]
            return (len(df) > 0, f"{len(df)} rows")

        def aten():
            r = ta.get_aten_op_kernels_and_delay()
            n = sum(len(df) for df in r.values())
            return (n > 0, f"{n} op-to-kernel sequences")

        def graph():
            cg = CallGraph(ta.t)
            n = len(getattr(cg, "call_stacks", []))
            return (n > 0, f"{n} call stacks")

        run(checks, "hta_kernel_breakdown", kernels)
        run(checks, "hta_idle_time", idle)
        run(checks, "hta_aten_op_kernels", aten)
        run(checks, "hta_call_graph", graph)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def tb_checks(path, checks):
    from torch_tb_profiler.profiler.data import RunProfileData
    from torch_tb_profiler.profiler.run_generator import RunGenerator

    d = tempfile.mkdtemp()
    try:
        f = os.path.join(d, "worker0.pt.trace.json")  # the file name pattern the plugin looks for
        shutil.copy(path, f)
        box = {}

        def load():
            data = RunProfileData.parse("worker0", None, f, d)
            box["p"] = RunGenerator("worker0", None, data).generate_run_profile()

        if not run(checks, "tb_load", load):
            for n in ("tb_operator_view", "tb_kernel_view", "tb_gemm_tensor_cores"):
                checks[n] = {"ok": False, "detail": "trace did not load"}
            return
        p = box["p"]
        ops = p.operation_table_by_name["data"]

        def gemm_tc():
            gemms = [r for r in ops if GEMM_OP.match(r["name"])]
            no = [r["name"] for r in gemms if r["tc_eligible"] != "Yes"]
            if not gemms:
                return (False, "no GEMM op in the operator table")
            return (not no, "not eligible: " + ", ".join(no) if no else f"{len(gemms)} GEMM ops eligible")

        run(checks, "tb_operator_view", lambda: (len(ops) > 0, f"{len(ops)} ops"))
        run(checks, "tb_kernel_view",
            lambda: (p.kernel_table is not None and len(p.kernel_table["data"]["rows"]) > 0,
                     f"{len(p.kernel_table['data']['rows'])} kernels" if p.kernel_table else "no kernel view"))
        run(checks, "tb_gemm_tensor_cores", gemm_tc)
    finally:
        shutil.rmtree(d, ignore_errors=True)


# Checks that need CPU ops: n/a on a trace that has none (a graph replay records one cudaGraphLaunch and no op).
NEEDS_OPS = {"hta_aten_op_kernels", "tb_operator_view", "tb_gemm_tensor_cores"}


def has_ops(path):
    return any(e.get("cat") == "cpu_op" for e in json.load(open(path)).get("traceEvents", []))


def chapter_of(path):
    """'01_matmul_add', '02_linear' or '03' (both MLP chapters run the same model) from our or PyTorch's file name."""
    m = re.match(r"(?:torch_)?(01_matmul_add|02_linear|03)", os.path.basename(path))
    return m.group(1) if m else None


def compare(files):
    """Reads the JSON lines of several runs; a check that fails on one of our traces while it passes on a PyTorch
    trace of the same chapter in the same environment is a failure. Returns the number of failures."""
    results = []  # (env, path, checks)
    for f in files:
        env = os.path.basename(f).rsplit(".", 1)[0]
        for line in open(f):
            if line.startswith("{"):
                d = json.loads(line)
                results.append((env, d["trace"], d["checks"]))
    failures = 0
    for env, path, checks in results:
        if os.path.basename(path).startswith("torch_"):
            continue
        base = [c for e, p, c in results
                if e == env and os.path.basename(p).startswith("torch_") and chapter_of(p) == chapter_of(path)]
        ops = has_ops(path)
        cells = []
        for name, r in checks.items():
            works_on_torch = any(b.get(name, {}).get("ok") for b in base)
            if r["ok"]:
                cells.append(f"{name} ok")
            elif name in NEEDS_OPS and not ops:
                cells.append(f"{name} n/a (no ops)")
            elif works_on_torch:
                failures += 1
                cells.append(f"{name} FAIL ({r['detail']})")
            else:
                cells.append(f"{name} fails on PyTorch's too ({r['detail'][:60]})")
        print(f"[{env}] {os.path.relpath(path)}:\n    " + "\n    ".join(cells))
    for env, path, checks in results:
        if os.path.basename(path).startswith("torch_"):
            bad = [f"{n} ({r['detail'][:80]})" for n, r in checks.items() if not r["ok"]]
            print(f"[{env}] baseline {os.path.basename(path)}: " + ("all ok" if not bad else "fails " + "; ".join(bad)))
    print(f"{failures} check(s) fail on our traces that pass on PyTorch's of the same chapter")
    return failures


def main(argv):
    if argv and argv[0] == "--compare":
        return 1 if compare(argv[1:]) else 0
    with_tb = "--no-tb" not in argv
    for path in [a for a in argv if not a.startswith("--")]:
        checks = {}
        hta_checks(path, checks)
        if with_tb:
            tb_checks(path, checks)
        print(json.dumps({"trace": path, "checks": checks}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
