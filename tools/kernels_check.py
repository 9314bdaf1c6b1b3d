#!/usr/bin/env python3
"""kernels_check: `ladder-trace kernels --csv` on every committed trace (traces/reference and the trace library's
test data), each rated against its GPU's datasheet peaks: fails if any row's tflops_pct or gbps_pct is above 100 (a
share that only a wrong peak or a wrong FLOP count can give) or is not a number from 0 to 100, or if the command
exits other than 0 or 1 (1: a file that is not a trace of kernels).

    tools/kernels_check.py LADDER_TRACE REPO
"""
import csv
import io
import os
import subprocess
import sys


def traces(repo):
    for root in ("traces/reference", "common/trace/tests/data"):
        for folder, _, files in sorted(os.walk(os.path.join(repo, root))):
            if "hostile" in folder:
                continue
            for f in sorted(files):
                if (f.endswith(".json") or f.endswith(".json.gz")) and "hta_figures" not in f:
                    yield os.path.join(folder, f)


def main():
    ladder_trace, repo = sys.argv[1], sys.argv[2]
    rows = rated = 0
    bad = []
    for path in traces(repo):
        run = subprocess.run([ladder_trace, "kernels", "--csv", path], capture_output=True, text=True)
        if run.returncode == 1:
            continue  # not a trace with events (a figures file, a trace of no kernels): one error line, exit 1
        if run.returncode != 0:  # a usage error, or a crash (a negative code: killed by a signal)
            bad.append(f"{os.path.relpath(path, repo)}: exit {run.returncode}: {run.stderr.strip()[:200]}")
            continue
        for row in csv.DictReader(io.StringIO(run.stdout)):
            rows += 1
            rated += row["tflops_pct"] != ""
            for col in ("tflops_pct", "gbps_pct"):
                # A rating is a number from 0 to 100; NaN or an infinity is as wrong as 120.
                if row[col] and not 0 <= float(row[col]) <= 100:
                    bad.append(f"{os.path.relpath(path, repo)}: {row['name'][:60]} {col} {row[col]}")
    print(f"{rows} kernel rows, {rated} rated against a TFLOP/s peak, {len(bad)} above 100%")
    for b in bad:
        print("  " + b)
    return 1 if bad or rated == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
