"""Trace.advise() equals `ladder-trace advise --csv` for every committed trace, torch's and chapter 07's folders; the
frames of traceinsight's analyses hold traceinsight 0.6.1's own figures (common/trace/tests/data/traceinsight/
figures.json), as the C++ test holds the library's."""
import json
import os

import pytest

import ladder_trace as lt
from test_frames import DATA, FOLDERS, REPO, TRACES, assert_same, cli, short


@pytest.mark.parametrize("path", TRACES + FOLDERS, ids=short)
def test_advise(path):
    assert_same(lt.load(path).advise(), cli("advise", "--csv", path))


def test_advise_of_one_step_and_its_findings():
    path = os.path.join(REPO, "traces", "reference", "h100", "01_matmul_add_size64.json")
    frame = lt.load(path).advise(step=3)
    assert_same(frame, cli("advise", "--csv", "--step", "3", path))
    assert list(frame["finding"]) == ["launch-bound"]
    assert frame["step"].tolist() == ["ProfilerStep#3"]
    assert frame["share (%)"][0] > 80


FIGURES = os.path.join(DATA, "traceinsight", "figures.json")


@pytest.fixture(scope="module")
def figures():
    with open(FIGURES) as f:
        return json.load(f)["traces"]


@pytest.mark.parametrize("rel", ["traces/reference/h100/06_train_mlp_eager.json",
                                 "traces/reference/h100/07_tp_mlp_tp_b64_s128_d768_h3072_np2",
                                 "common/trace/tests/data/torch211/two_streams.json"])
def test_traceinsight_frames(rel, figures):
    t = lt.load(os.path.join(REPO, rel))
    fig = figures[rel]
    idle = t.idle_time()
    whole = idle[idle["step"] == "all"]
    for row in fig["idle_time"]:
        mine = whole[(whole["stream"] == row["stream"]) & (whole["idle_category"] == row["idle_category"])]
        if "rank" in whole.columns:
            mine = mine[mine["rank"] == row["rank"]]
        assert len(mine) == 1, row
        assert abs(mine["idle_time"].iloc[0] - row["idle_time"]) <= 0.0051, row
    launches = t.launch_stats()
    for rank, rows in fig["launch_stats"].items():
        ours = launches[launches["hta"] == 1]
        if "rank" in ours.columns:
            ours = ours[ours["rank"] == int(rank)]
        ours = ours.set_index("correlation")
        for row in rows:
            got = ours.loc[row["correlation"]]
            for col in ("cpu_duration", "gpu_duration", "launch_delay"):
                assert abs(got[col] - row[col]) <= 0.001, (row, col)
    seq = t.kernel_sequences("ProfilerStep", min_pattern_len=1)
    if "rank" in seq.columns:
        seq = seq[seq["rank"] == fig["ranks"][0]]
    seq = seq.set_index("pattern")
    for row in fig["kernel_sequences"]:
        got = seq.loc[row["pattern"]]
        assert got["count"] == row["count"]
        assert abs(got["GPU kernel duration (us)"] - row["GPU kernel duration (us)"]) <= 0.001
    path = t.critical_path(step=t.step_names[0])
    assert set(path["bound_by"]) <= {"cpu_bound", "gpu_kernel_launch_overhead", "gpu_kernel_kernel_overhead",
                                     "gpu_compute_bound", "gpu_communication_bound"}
    assert (path["duration"] > 0).all()


def test_kernel_sequences_needs_an_operator():
    t = lt.load(os.path.join(REPO, "traces", "reference", "h100", "03_simple_mlp.json"))
    with pytest.raises(ValueError, match="operator_name must name an op"):
        t.kernel_sequences("")
