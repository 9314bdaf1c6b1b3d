"""Every frame of ladder_trace equals what `ladder-trace VIEW --csv` prints for the same trace and options: the same
columns, the same rows in the same order, every string cell equal and every number equal to the CSV's text read as a
double (the CSV of a typed table holds every digit: the kernels and summary frames are exact). The kernels frame's
HTA columns equal HolisticTraceAnalysis 0.5.0's get_gpu_kernel_breakdown() of the same traces. The command is the one
the same wheel installed.

Run by CTest (tests/run_in_venv.sh builds the wheel in a throwaway virtualenv), or by hand in a virtualenv with the
package: python -m pytest tools/python/tests
"""
import glob
import gzip
import io
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import ladder_trace as lt

REPO = os.environ.get("LADDER_REPO") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CLI = os.path.join(os.path.dirname(sys.executable), "ladder-trace")
DATA = os.path.join(REPO, "common", "trace", "tests", "data")
REFERENCE = sorted(glob.glob(os.path.join(REPO, "traces", "reference", "h100", "*.json")))
TORCH = sorted(glob.glob(os.path.join(DATA, "torch_*.json")) + glob.glob(os.path.join(DATA, "torch211", "*.json")) +
               glob.glob(os.path.join(DATA, "torch211_user", "*", "*.json.gz")))
RANKS = os.path.join(DATA, "torch211_user", "ranks")
# Folders of ranks: gloo's two ranks, torch's NCCL runs (DDP, tensor parallel, async_op) and chapter 07's on H100s.
FOLDERS = [RANKS] + sorted(glob.glob(os.path.join(DATA, "torch211_nccl", "*", ""))) + sorted(
    glob.glob(os.path.join(REPO, "traces", "reference", "h100", "07_*", "")))
MEMORY = glob.glob(os.path.join(DATA, "torch211_user", "memory", "*.json.gz"))[0]
TRACES = REFERENCE + TORCH


def short(path):
    return os.path.relpath(path, REPO)


def cli(*args):
    """The command's stdout; a failure is the test's failure, with its stderr."""
    run = subprocess.run([CLI, *args], capture_output=True, text=True)
    assert run.returncode == 0, f"ladder-trace {' '.join(args)}: exit {run.returncode}: {run.stderr}"
    return run.stdout


def assert_same(frame, csv, renames=None):
    """The frame holds the CSV's table: columns, rows, strings as written, numbers as the text reads."""
    want = pd.read_csv(io.StringIO(csv), dtype=str, keep_default_na=False).rename(columns=renames or {})
    assert list(frame.columns) == list(want.columns)
    assert len(frame) == len(want), f"{len(frame)} rows, the command printed {len(want)}"
    for col in frame.columns:
        got = frame[col]
        if got.dtype == object:
            assert got.tolist() == want[col].tolist(), col
        else:
            expect = want[col].replace("", "nan").astype("float64").to_numpy()
            assert np.array_equal(got.to_numpy("float64"), expect, equal_nan=True), col
            if got.dtype == "int64":
                assert all("." not in v and v != "" for v in want[col]), f"{col}: integers in the frame, not in the CSV"


@pytest.fixture(scope="module")
def loaded():
    cache = {}

    def get(path):
        if path not in cache:
            cache[path] = lt.load(path)
        return cache[path]

    return get


@pytest.mark.parametrize("path", TRACES, ids=short)
def test_summary(path, loaded):
    assert_same(loaded(path).summary(), cli("summary", "--csv", "--rows", "1000000", path))


@pytest.mark.parametrize("path", TRACES, ids=short)
def test_steps(path, loaded):
    assert_same(loaded(path).steps(), cli("summary", "--steps", "--csv", path))


@pytest.mark.parametrize("path", TRACES, ids=short)
def test_kernels(path, loaded):
    assert_same(loaded(path).kernels(), cli("kernels", "--csv", path))


@pytest.mark.parametrize("path", TRACES, ids=short)
def test_breakdown(path, loaded):
    assert_same(loaded(path).breakdown(), cli("breakdown", "--csv", path))


@pytest.mark.parametrize("path", TRACES, ids=short)
def test_ranks_of_one_trace(path, loaded):
    assert_same(loaded(path).ranks(), cli("ranks", "--csv", path))


def test_options_as_the_command_takes_them(loaded):
    t = loaded(os.path.join(DATA, "torch211", "transformer_fwd_bwd.json"))
    f = os.path.join(DATA, "torch211", "transformer_fwd_bwd.json")
    assert_same(t.summary(sort="self_cpu_time_total", rows=7, group_by_input_shape=True, filter="aten::"),
                cli("summary", "--csv", "--sort", "self_cpu_time_total", "--rows", "7", "--group-by-input-shape",
                    "--filter", "aten::", f))
    step = t.step_names[-1]
    assert_same(t.kernels(step=step.split("#")[1], all=True, peak_tflops=100, peak_gbps=1000),
                cli("kernels", "--csv", "--step", step.split("#")[1], "--all", "--peak-tflops", "100",
                    "--peak-gbps", "1000", f))
    assert_same(t.breakdown(step=step), cli("breakdown", "--csv", "--step", step, f))
    assert_same(t.summary(step=step), cli("summary", "--csv", "--rows", "1000000", "--step", step, f))
    assert_same(t.summary(step=step.split("#")[1], rows=5, sort="self_cpu_time_total"),
                cli("summary", "--csv", "--rows", "5", "--sort", "self_cpu_time_total", "--step", step.split("#")[1], f))
    assert_same(t.ranks(step=step), cli("ranks", "--csv", "--step", step, f))


def test_memory(loaded):
    t = loaded(MEMORY)
    frame = t.memory()
    assert set(frame["table"]) == {"peak", "alive", "op"}
    assert_same(frame, cli("memory", "--csv", MEMORY))
    assert_same(t.memory(step=t.step_names[0]), cli("memory", "--csv", "--step", t.step_names[0], MEMORY))
    assert "CUDA Mem" in t.summary().columns


def test_memory_frames_one_per_table(loaded):
    """memory_steps(), memory_blocks() and memory_ops(): memory()'s three kinds of rows, each its own typed frame."""
    t = loaded(MEMORY)
    m = t.memory()
    for frame, kind, cols in [(t.memory_steps(), "peak", ["step", "device", "peak_allocated", "peak_allocated_us",
                                                         "before_trace"]),
                              (t.memory_blocks(), "alive", ["step", "device", "op", "addr", "bytes", "alloc_us"]),
                              (t.memory_ops(), "op", ["step", "device", "op", "calls", "size_increase",
                                                      "self_size_increase", "allocation_count", "allocation_size"])]:
        rows = m[m["table"] == kind].reset_index(drop=True)
        assert len(frame) == len(rows) > 0, kind
        for col in cols:
            if frame[col].dtype == object:
                assert frame[col].tolist() == rows[col].tolist(), (kind, col)
            else:
                assert np.allclose(frame[col].to_numpy("float64"), rows[col].to_numpy("float64"), rtol=0, atol=5e-4)
    assert t.memory_steps()["peak_allocated"].dtype == "int64"
    assert t.memory_steps()["peak_allocated"].max() == 110676480
    with pytest.raises(lt.TraceError, match="no \\[memory\\] record"):
        lt.load(os.path.join(REPO, "traces", "reference", "h100", "02_linear.json")).memory_steps()


@pytest.mark.parametrize("folder", FOLDERS, ids=short)
def test_ranks_hold_every_digit(folder, loaded):
    """ranks() is the typed table `ranks --csv` prints: times in us at full precision (not the text's one decimal),
    the means exactly the mean of the steps, HTA's comm/comp overlap unrounded, fixed dtypes, "rank" last."""
    t = loaded(folder)
    r = t.ranks()
    assert_same(r, cli("ranks", "--csv", folder))
    assert list(r.columns) == ["step", "wall_us", "slowest", "straggler", "computation_us", "overlapping_us",
                               "communication_us", "other_us", "comp_comm_overlap_pctg", "collectives", "unmatched",
                               "wait_us", "arrived_last", "caused_wait_us", "rank"]
    assert r["step"].dtype == object and r["rank"].dtype == "int64" and r["collectives"].dtype == "int64"
    assert all(r[c].dtype == "float64" for c in ["wall_us", "slowest", "wait_us", "comp_comm_overlap_pctg"])
    steps, means = r[~r["step"].str.startswith("mean of ")], r[r["step"].str.startswith("mean of ")]
    # A figure of whole nanoseconds: three decimals at most, and not the text's 0.1 us.
    assert not np.allclose(steps["wall_us"], steps["wall_us"].round(1), rtol=0, atol=1e-9)
    assert np.allclose(steps["wall_us"] * 1000, (steps["wall_us"] * 1000).round(), rtol=0, atol=1e-6)
    for _, m in means.iterrows():
        mine = steps[steps["rank"] == m["rank"]]
        for col in ["wall_us", "computation_us", "communication_us", "wait_us", "caused_wait_us"]:
            assert m[col] == pytest.approx(mine[col].mean(), rel=1e-12, abs=1e-9), (m["rank"], col)
        assert m["collectives"] == mine["collectives"].sum()
    comm = steps["overlapping_us"] + steps["communication_us"]
    defined = steps["comp_comm_overlap_pctg"].notna()
    # Defined exactly where a rank's collectives ran as GPU kernels for some time: never for gloo's (on the CPU), so
    # there the check below would hold for nothing.
    if folder == RANKS:
        assert not defined.any()
    else:
        assert defined.any() and (defined == (comm > 0)).all()
    assert np.allclose(steps["comp_comm_overlap_pctg"][defined],
                       100 * steps["overlapping_us"][defined] / comm[defined], rtol=1e-12)
    assert (steps.groupby("step")["slowest"].sum() == 1).all()  # one slowest rank per step


def test_memory_of_a_folder(tmp_path, loaded):
    """memory() of a folder: each rank's typed table, joined with "rank" last, every number as the command's --csv
    prints it for that rank's file (the command reads one trace; the frame reads them all)."""
    for r in (0, 1):
        os.symlink(MEMORY, tmp_path / f"rank{r}.{r}.pt.trace.json.gz")
    m = lt.load(str(tmp_path)).memory()
    assert m.columns[-1] == "rank" and m["rank"].dtype == "int64"
    one = cli("memory", "--csv", MEMORY)
    for r in (0, 1):
        assert_same(m[m["rank"] == r].drop(columns="rank").reset_index(drop=True), one)
    assert m["peak_allocated"].dtype == "float64" and m["peak_allocated"].max() == 110676480
    assert set(m["table"]) == {"peak", "alive", "op"}


def test_rank_ids(loaded):
    assert loaded(RANKS).rank_ids == [0, 1]


@pytest.mark.parametrize("folder", FOLDERS, ids=short)
def test_folder_of_ranks(folder, loaded):
    t = loaded(folder)
    assert len(t.rank_ids) >= 2
    for frame, args, renames in [(t.summary(), ["summary", "--csv", "--rows", "1000000"], None),
                                 (t.steps(), ["summary", "--steps", "--csv"], None),
                                 (t.kernels(), ["kernels", "--csv"], None),
                                 (t.breakdown(), ["breakdown", "--csv"], None),
                                 (t.ranks(), ["ranks", "--csv"], None)]:
        assert "rank" in frame.columns
        assert set(frame["rank"]) <= set(t.rank_ids)
        assert frame.columns[-1] == "rank"  # last, as in HolisticTraceAnalysis's frames
        assert_same(frame, cli(*args, folder), renames)


def test_paths_file_objects_and_stdin():
    """str, bytes and os.PathLike paths are paths; a trace in memory is a binary file object (JSON or gzip)."""
    import pathlib

    path = os.path.join(REPO, "traces", "reference", "h100", "03_fused_mlp.json")
    want = lt.load(path).kernels()
    pd.testing.assert_frame_equal(lt.load(pathlib.Path(path)).kernels(), want)
    pd.testing.assert_frame_equal(lt.load(os.fsencode(path)).kernels(), want)
    with open(path, "rb") as f:
        text = f.read()
    pd.testing.assert_frame_equal(lt.load(io.BytesIO(text)).kernels(), want)
    pd.testing.assert_frame_equal(lt.load(io.BytesIO(gzip.compress(text))).kernels(), want)
    with open(path, "rb") as f:
        pd.testing.assert_frame_equal(lt.load(f).kernels(), want)
    code = "import ladder_trace as lt; print(lt.load('-').kernels().to_csv(index=False), end='')"
    run = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, check=True)
    assert run.stdout.decode() == want.to_csv(index=False)
    with pytest.raises(FileNotFoundError):  # bytes are a path, never a trace's content
        lt.load(text[:100])
    with pytest.raises(TypeError):
        lt.load(3)


def test_arguments_are_checked_as_the_command_checks_them():
    t = lt.load(os.path.join(REPO, "traces", "reference", "h100", "02_linear.json"))
    for bad in (-1, 0, float("nan")):
        with pytest.raises(lt.UsageError, match="peak_tflops"):
            t.kernels(peak_tflops=bad)
        with pytest.raises(lt.UsageError, match="peak_gbps"):
            t.kernels(peak_gbps=bad)
    for bad in (0, -1):
        with pytest.raises(lt.UsageError, match="rows"):
            t.summary(rows=bad)
    run = subprocess.run([CLI, "kernels", "--peak-tflops", "-1", os.path.join(REPO, "traces", "reference", "h100",
                                                                             "02_linear.json")], capture_output=True)
    assert run.returncode != 0


def test_frames_have_fixed_dtypes_and_the_names_readers_know():
    k = lt.load(os.path.join(REPO, "traces", "reference", "h100", "04_epilogue_mlp.json")).kernels()
    assert list(k.columns[:7]) == ["name", "sum (us)", "max (us)", "min (us)", "stddev", "mean (us)", "kernel_type"]
    assert k["calls"].dtype == "int64" and k["sum (us)"].dtype == "float64" and k["name"].dtype == object
    assert (k["tflops_pct"].dropna() <= 100).all()
    fast = k[k["name"].str.contains("geglu_gemm_fast_kernel")].iloc[0]
    assert fast["tensor_cores"] == "yes" and 67.5 < fast["tflops_pct"] < 68.5
    # Full precision: the mean is the sum over the calls, not a printed "114.95".
    assert fast["mean (us)"] == fast["sum (us)"] / fast["calls"]
    s = lt.load(os.path.join(DATA, "torch211_user", "flops", "flops.json")).summary()
    assert list(s.columns) == ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                               "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg", "CPU Mem", "Self CPU Mem",
                               "CUDA Mem", "Self CUDA Mem", "# of Calls", "Total FLOPs", "device"]
    mm = s[s["Name"] == "aten::mm"].iloc[0]
    assert mm["Total FLOPs"] == 369098752  # torch's table: aten::mm ... 369098.752 (Total KFLOPs)
    assert s["# of Calls"].dtype == "int64"
    # A range torch lists twice, its CPU range and its span on the GPU lane: "device" tells them apart.
    f = lt.load(os.path.join(REPO, "traces", "reference", "h100", "03_fused_mlp.json")).summary()
    assert sorted(f[f["Name"] == "mlp_fwd"]["device"]) == ["CPU", "CUDA"]


@pytest.mark.parametrize("key", ["nccl_ddp", "user_ranks"])
def test_kernels_are_htas(key):
    """HTA 0.5.0's get_gpu_kernel_breakdown (tools/consumers/hta_kernel_figures.py, HTA_DISABLE_NS_ROUNDING=1) against
    kernels() of the step HTA keeps (it drops the last), for every kernel whose calls HTA saw all of: the same
    sum, max, min, mean and stddev in us, and the same kernel_type."""
    import json

    with open(os.path.join(DATA, "torch211_nccl", "hta_kernels.json")) as f:
        entry = json.load(f)["traces"][key]
    hta = pd.DataFrame(entry["kernel_metrics"])
    t = lt.load(os.path.join(REPO, entry["path"]))
    compared = 0
    for step in t.step_names[:-1]:
        ours = t.kernels(step=step)
        for _, row in ours.iterrows():
            theirs = hta[(hta["name"] == row["name"]) & (hta["rank"] == row["rank"])]
            if len(theirs) != 1 or entry["kept"][str(row["rank"])].get(row["name"]) != row["calls"]:
                continue
            h = theirs.iloc[0]
            for col in ("sum (us)", "max (us)", "min (us)", "mean (us)", "stddev"):
                assert abs(row[col] - h[col]) <= 1e-6 * max(1.0, abs(h[col])), (row["name"], col, row[col], h[col])
            assert row["kernel_type"] == h["kernel_type"]
            compared += 1
    assert compared >= 3


@pytest.mark.parametrize("name", ["bin.json", "ctl.json", "trunc.json.gz", "ts_out_of_range.json", "all_skipped.json",
                                  "empty.json", "not_json.json.gz", "chrome_no_torch.json"])
def test_bad_trace_is_one_line_as_the_command_says(name):
    path = os.path.join(DATA, "hostile", name)
    run = subprocess.run([CLI, "summary", path], capture_output=True, text=True)
    assert run.returncode == 1
    with pytest.raises(lt.TraceError) as e:
        lt.load(path).summary()
    assert "\n" not in str(e.value)
    assert run.stderr.strip().endswith("error: " + str(e.value))


def test_errors_of_views():
    t = lt.load(os.path.join(REPO, "traces", "reference", "h100", "02_linear.json"))
    with pytest.raises(lt.TraceError, match="no \\[memory\\] record"):
        t.memory()
    with pytest.raises(lt.TraceError, match="ProfilerStep#4"):  # the error lists the steps there are
        t.kernels(step=99)
    with pytest.raises(ValueError, match="sort"):
        t.summary(sort="bogus")
    with pytest.raises(FileNotFoundError):
        lt.load(os.path.join(REPO, "nope.json"))


def test_skipped_events_warn():
    with pytest.warns(UserWarning, match="skipped 8 events"):
        lt.load(os.path.join(DATA, "hostile", "skipped_events.json"))


def test_import_leaves_pandas_alone():
    code = "import sys, ladder_trace; assert 'pandas' not in sys.modules; print('ok')"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "ok\n"


def test_the_command_is_installed():
    assert cli("--version").startswith("ladder-trace ")


def test_one_libstdcxx_in_the_process():
    """The module and the command use the process's libstdc++.so.6, no static copy of their own (two copies in one
    process, each with its own exception and locale state, break as soon as one throws through the other)."""
    from ladder_trace import _core

    for binary in (_core.__file__, CLI):
        try:
            dynamic = subprocess.run(["readelf", "-d", "-W", binary], capture_output=True, text=True, check=True).stdout
            symbols = subprocess.run(["readelf", "-s", "-W", binary], capture_output=True, text=True, check=True).stdout
        except FileNotFoundError:
            pytest.skip("readelf is not installed (binutils)")
        assert "Shared library: [libstdc++.so.6]" in dynamic, binary
        # libstdc++'s own locale machinery is defined in it only when it was linked in statically.
        defined = [line for line in symbols.splitlines() if "_ZNSt6locale5_ImplC" in line and " UND " not in line]
        assert not defined, f"{binary} holds a static copy of libstdc++: {defined[:1]}"


@pytest.mark.parametrize("figures,key", [("torch211_user", "fused_mlp_h100"), ("torch211_user", "ranks"),
                                         ("torch211_user", "streams"), ("torch211_nccl", "ddp"),
                                         ("torch211_nccl", "tp"), ("torch211_nccl", "async")])
def test_temporal_breakdown_is_htas(figures, key):
    """HTA 0.5.0's own get_temporal_breakdown of the same traces (tools/consumers/hta_figures.py wrote them, with
    HTA_DISABLE_NS_ROUNDING=1): the same columns, and every time within a nanosecond (HTA sums floats)."""
    import json

    with open(os.path.join(DATA, figures, "hta_figures.json")) as f:
        entry = json.load(f)["traces"][key]
    hta = pd.DataFrame(entry["ns"]["temporal_breakdown"])
    path = os.path.join(REPO, entry["path"])
    files = sorted(f for f in os.listdir(path) if ".json" in f) if os.path.isdir(path) else []
    if len(files) == 1:  # HTA reads a folder of one trace without a rank as rank 0; ladder-trace wants the file
        path = os.path.join(path, files[0])
    ours = lt.load(path).temporal_breakdown()
    assert list(ours.columns) == ["rank", "idle_time(us)", "compute_time(us)", "non_compute_time(us)",
                                  "kernel_time(us)", "idle_time_pctg", "compute_time_pctg", "non_compute_time_pctg"]
    hta = hta[ours.columns]
    assert ours["rank"].tolist() == hta["rank"].tolist()
    for col in ours.columns[1:5]:
        assert np.allclose(ours[col], hta[col], rtol=0, atol=1e-3), col
    for col in ours.columns[5:]:
        assert np.allclose(ours[col], hta[col], rtol=0, atol=0.01 + 1e-9), col
