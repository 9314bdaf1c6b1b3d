"""ladder_trace: PyTorch (Kineto) traces as pandas DataFrames, read and analysed in C++.

    import ladder_trace as lt
    t = lt.load("trace.json.gz")     # a file (.json or .json.gz), "-" for standard input, bytes, or a folder of ranks
    t.kernels()                        # every kernel: time, share of the GPU time, GB/s and TFLOP/s against a peak
    t.breakdown()                      # per step: where the wall time went, GPU idle time, stream concurrency

Each method returns the table `ladder-trace VIEW --csv` prints for the same trace and options, as a DataFrame (times in
microseconds, memory in bytes), every number as the analysis computed it (full precision, never read back from
printed text), each column of one dtype (int64, float64 or str) whatever the data; a folder's tables have a `rank`
column last, as HolisticTraceAnalysis's frames. Column names are HTA's where the quantity is HTA's (kernels():
"sum (us)", "max (us)", "min (us)", "stddev", "mean (us)", "kernel_type") and torch's table's for summary().
pandas is imported only when a frame is asked for.
"""
import math
import os
import warnings

from . import _core

__all__ = ["load", "Trace", "Error", "TraceError", "UsageError"]
__version__ = "1.0.0"

Error = _core.Error            # every error of the reader and the views: a ValueError with one line
TraceError = _core.TraceError  # a trace that cannot be read (bad JSON, a field out of range, no usable event)
UsageError = _core.UsageError  # an argument the view does not take (an unknown sort key, a bad filter)


def load(source, max_json=None):
    """Reads a trace: a path (str, bytes or os.PathLike: a file, gzip, or a folder whose traces are one rank each),
    "-" for standard input, or a binary file object (io.BytesIO(data) for a trace in memory, JSON or gzip). The whole
    trace is read and indexed once, in C++; every view after that reuses the index. A bad file raises TraceError with
    one line naming it."""
    limit = _core.DEFAULT_MAX_JSON if max_json is None else int(max_json)
    if hasattr(source, "read"):
        return Trace(_from_bytes(source.read(), limit))
    if not isinstance(source, (str, bytes, os.PathLike)):
        raise TypeError(f"load() takes a path or a binary file object, not {type(source).__name__}")
    path = os.fsdecode(os.fspath(source))
    if path != "-" and not os.path.exists(path):
        raise FileNotFoundError(f"no such trace: {path}")
    return Trace(_core.Traces.load(path, limit))


def _from_bytes(data, limit):
    if not isinstance(data, bytes):
        raise TypeError("load() of a file object needs one opened in binary mode ('rb')")
    if len(data) > limit:
        raise TraceError(f"trace <bytes> holds more than {limit} bytes of JSON (max_json)")
    if data[:2] == b"\x1f\x8b":  # gzip: inflated by the C++ reader, a chunk at a time, from a file
        import tempfile
        with tempfile.NamedTemporaryFile(suffix=".json.gz") as f:
            f.write(data)
            f.flush()
            return _core.Traces.load(f.name, limit)
    return _core.Traces.parse(data, "<bytes>")


def _positive(value):
    """A positive, finite number: what --peak-tflops and --peak-gbps take (nan, inf, 0 and text are refused)."""
    try:
        return math.isfinite(float(value)) and float(value) > 0
    except (TypeError, ValueError):
        return False


def _step(step):
    return "" if step is None else str(step)


class Trace:
    """A loaded trace, or a folder's ranks. Methods return pandas DataFrames; `step` is 3 or "ProfilerStep#3"."""

    def __init__(self, traces):
        self._t = traces
        for note in traces.notes:
            warnings.warn(note, stacklevel=3)

    @property
    def rank_ids(self):
        """The ranks read, in order (a single trace: [its rank], 0 unless it says otherwise)."""
        return list(self._t.ranks)

    @property
    def paths(self):
        return list(self._t.paths)

    @property
    def step_names(self):
        """The ProfilerStep#k names of the (first) trace, or ["whole trace"] when it has none."""
        return list(self._t.step_names)

    def __repr__(self):
        what = f"folder of {len(self.rank_ids)} ranks" if self._t.folder else self.paths[0]
        return f"<ladder_trace.Trace {what}>"

    def summary(self, sort="cuda_time_total", rows=None, group_by_input_shape=False, filter=None, step=None):
        """torch's key_averages() table (`ladder-trace summary --csv`): one row per op name, with every column torch's
        table can print under its name ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
        "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg", "CPU Mem", "Self CPU Mem", "CUDA Mem",
        "Self CUDA Mem", "# of Calls", "Total FLOPs"; "Input Shapes" when grouped by them): times in us as torch sums
        them, shares in %, memory in bytes (0 without profile_memory=True), FLOPs as torch counts them (with_flops=True;
        unscaled, NaN where torch prints "--"), and "device" ("CPU" or "CUDA": a range torch lists twice, its CPU
        range and its span on the GPU, told apart). rows=None: every row, else a positive count (`--rows`). step: the
        table of that step's events alone (`--step`); None: the whole trace."""
        limit = -1 if rows is None else int(rows)
        if limit < 1 and rows is not None:
            raise UsageError(f"rows must be None or a positive count, not {rows!r}")
        return _frame(self._t.summary(_step(step), sort, limit, bool(group_by_input_shape), filter or ""))

    def steps(self):
        """Per step: kernels, wall time, GPU busy time and share, CPU time in launches and syncs
        (`ladder-trace summary --steps --csv`)."""
        return _frame(self._t.steps())

    def kernels(self, step=None, all=False, peak_tflops=None, peak_gbps=None):
        """Every kernel, copy and set by name (all=True: one row each, in time order), `ladder-trace kernels --csv`:
        HolisticTraceAnalysis's get_gpu_kernel_breakdown columns first ("name", "sum (us)", "max (us)", "min (us)",
        "stddev", "mean (us)", "kernel_type"), then the launching op, calls, share of the GPU time, bytes, FLOPs, GB/s
        and TFLOP/s with their share of the GPU's datasheet peak or of the one given (positive numbers, as
        --peak-tflops and --peak-gbps take), the peak each TFLOP/s share is of, tensor cores and why a cell is empty.
        No share is ever above 100%."""
        for name, value in (("peak_tflops", peak_tflops), ("peak_gbps", peak_gbps)):
            if value is not None and not _positive(value):
                raise UsageError(f"{name}: must be a positive number, got {value}")
        cols = self._t.kernels(_step(step), bool(all), float(peak_tflops or 0), float(peak_gbps or 0))
        return _frame(cols)

    def breakdown(self, step=None):
        """Per step and their mean: the wall time split as the TensorBoard profiler's Overview splits it (kernel,
        memcpy, memset, communication, runtime, dataloader, CPU exec, other), GPU busy and idle time, concurrency
        (`ladder-trace breakdown --csv`)."""
        return _frame(self._t.breakdown(_step(step)))

    def memory(self, step=None):
        """A profile_memory=True trace's memory per step and device (`ladder-trace memory --csv`): the peaks ("table"
        == "peak"), the blocks alive at each peak ("alive") and per-op allocation statistics ("op"), in bytes, in one
        frame as the command prints them: every number a float, NaN where the row's kind has no such figure;
        memory_steps(), memory_blocks() and memory_ops() give each kind its own frame, with integer columns."""
        return _frame(self._t.memory_frame(_step(step), -1))

    def memory_steps(self, step=None):
        """The peaks of memory(), one row per step and device: peak_allocated (bytes), peak_allocated_us (from the
        step's start), peak_reserved (-1 where the trace holds no "Total Reserved"), alive_blocks, before_trace."""
        return _frame(self._t.memory_frame(_step(step), 0))

    def memory_blocks(self, step=None):
        """The blocks alive at each peak of memory(): step, device, the op that made the block, addr, bytes,
        alloc_us."""
        return _frame(self._t.memory_frame(_step(step), 1))

    def memory_ops(self, step=None):
        """The per-op allocation statistics of memory() (the TensorBoard plugin's Memory view): calls, size increase,
        allocation count and size, each with its self figure, in bytes."""
        return _frame(self._t.memory_frame(_step(step), 2))

    def ranks(self, step=None):
        """Per step and rank, and per rank the mean of its steps: wall time, computation, overlap and communication,
        HTA's comm/comp overlap for the step ("comp_comm_overlap_pctg", unrounded), collectives and who waited for whom
        (`ladder-trace ranks --csv`), times in us; "rank" last. A single trace is one rank."""
        return _frame(self._t.rank_table(_step(step)))

    def temporal_breakdown(self):
        """HolisticTraceAnalysis's get_temporal_breakdown(), per rank, with its columns: over the GPU activities HTA
        keeps (it drops what the last ProfilerStep launched), the span from the first start to the last end
        ("kernel_time(us)"), the time no activity ran ("idle_time(us)"), the union of the compute kernels and the rest,
        and their percentages rounded as HTA rounds them. Times from the trace's nanoseconds, as HTA computes them with
        HTA_DISABLE_NS_ROUNDING=1."""
        import pandas as pd

        rows = self._t.hta_temporal()
        us = {name: [r[k] / 1e3 for r in rows] for k, name in
              ((2, "idle_time(us)"), (3, "compute_time(us)"), (4, "non_compute_time(us)"), (1, "kernel_time(us)"))}
        df = pd.DataFrame({"rank": pd.Series([r[0] for r in rows], dtype="int64"), **us})
        for part in ("idle_time", "compute_time", "non_compute_time"):
            df[part + "_pctg"] = round(100 * (df[part + "(us)"] / df["kernel_time(us)"]), 2)
        return df


    def advise(self, step=None):
        """Per step, what bounds it, measured, and the rung of the ladder that teaches the fix: one row per finding
        with its figure, unit, share (%), the line `ladder-trace advise` prints and the rung (`ladder-trace advise
        --csv`; a folder: every rank's findings and the ranks', with a "rank" column)."""
        return _frame(self._t.advise(_step(step)))

    def idle_time(self, kernel_wait_ns=30000):
        """traceinsight's idle time breakdown per stream, for the whole trace ("step" == "all", over the activities
        traceinsight keeps) and per step: host wait, kernel wait (gaps under kernel_wait_ns: traceinsight's default
        is 30 in the trace's microseconds, 30,000 ns), other; idle_time in us and its share of the stream's."""
        return _frame(self._t.idle_time(int(kernel_wait_ns)))

    def launch_stats(self):
        """traceinsight's kernel launch statistics: per correlation id the launch call's duration, the activity's and
        the launch delay (us), the outliers by its cut-offs (50 us, 100 us, an activity shorter than its call), and
        "hta": 1 for the calls traceinsight counts (cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync,
        cudaMemsetAsync)."""
        return _frame(self._t.launch_stats())

    def kernel_sequences(self, operator_name="ProfilerStep", min_pattern_len=3):
        """traceinsight's frequent kernel sequences: for the shallowest ops whose name holds operator_name, the
        activities each launched, by pattern, with their count and total GPU and CPU time."""
        return _frame(self._t.kernel_sequences(str(operator_name), int(min_pattern_len)))

    def critical_path(self, step=None):
        """Per step, the chain of CPU time, launches and GPU activities from the step's start to the end of its
        work, each edge with traceinsight's bound_by category and its duration (us)."""
        return _frame(self._t.critical_path(_step(step)))


def _frame(columns):
    """The one conversion to pandas: [(name, kind, values)] as the C++ module returns a table (kind "int", "float" or
    "str"), to a DataFrame with int64, float64 and object columns in that order, whatever the values."""
    import pandas as pd

    data = {}
    for name, kind, values in columns:
        dtype = {"int": "int64", "float": "float64", "str": object}[kind]
        data[name] = pd.Series(values, dtype=dtype)
    return pd.DataFrame(data, columns=[c[0] for c in columns])
