"""The trace readers read the real traces, and a malformed row names its file, line and column."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from loadmaster.core.resources import GPU_DEVICE
from loadmaster.replay.trace import TraceFormatError
from loadmaster.replay.traces import UnknownTraceError, load_trace
from loadmaster.replay.traces.alibaba_2017 import FOLDER as ALIBABA
from loadmaster.replay.traces.nasa_ipsc import FILE as NASA
from loadmaster.replay.traces.openb import FOLDER as OPENB


def test_openb_reads_every_pod_in_arrival_order_with_its_gpu_share_and_runtime(traces: Path) -> None:
    trace = load_trace("openb", traces)
    assert (trace.name, len(trace.nodes), len(trace.jobs)) == ("openb:default", 1523, 8152)
    arrivals = [job.arrival_s for job in trace.jobs]
    assert arrivals == sorted(arrivals)
    first = trace.jobs[0]  # openb-pod-0000: 1 whole GPU, created 0, deleted 12537496
    assert first.job.tasks[0].request["gpu"] == GPU_DEVICE
    assert first.runtime_s == 12537496
    shared = next(j for j in trace.jobs if j.job.name == "openb-pod-0001")  # gpu_milli 460
    assert shared.job.tasks[0].request["gpu"] == 460


def test_an_openb_variant_without_time_columns_arrives_at_once_and_runs_to_the_end(traces: Path) -> None:
    trace = load_trace("openb:multigpu20", traces)
    assert {job.arrival_s for job in trace.jobs} == {0.0}
    assert {job.runtime_s for job in trace.jobs} == {None}


def test_nasa_ipsc_jobs_are_whole_gangs_on_128_single_processor_nodes(traces: Path) -> None:
    trace = load_trace("nasa-ipsc", traces)
    assert (len(trace.nodes), len(trace.jobs)) == (128, 18239)
    first = trace.jobs[0].job  # job 1: 128 processors, 1451 s
    assert len(first.tasks) == first.min_available == 128
    assert trace.jobs[0].runtime_s == 1451


def test_alibaba_2017_keeps_the_first_n_tasks_with_all_their_instances(traces: Path) -> None:
    trace = load_trace("alibaba-2017:100", traces)
    assert len(trace.nodes) == 1313 and len(trace.jobs) == 100
    assert all(node.allocatable["cpu"] == 64_000 for node in trace.nodes)
    assert all(job.job.min_available == 1 for job in trace.jobs)
    assert sum(len(job.job.tasks) for job in trace.jobs) > 100  # tasks of many instances


def test_alibaba_2017_is_read_as_columns_and_each_task_is_made_only_when_read(traces: Path) -> None:
    whole = load_trace("alibaba-2017", traces)
    # counted from the columns: the 11 M instances are not made to count them
    assert (len(whole.jobs), int(whole.jobs.task_counts.sum())) == (71454, 11_046_207)
    assert (whole.jobs.arrival_s[1:] >= whole.jobs.arrival_s[:-1]).all()
    assert list(whole.jobs[:100]) == list(load_trace("alibaba-2017:100", traces).jobs)  # the first N
    assert whole.jobs[3] == whole.jobs[3] and whole.jobs[3] is not whole.jobs[3]  # made at each read
    late = whole.jobs.between(40_000.0, 40_600.0)
    assert len(late) > 0 and all(40_000.0 <= job.arrival_s < 40_600.0 for job in late)
    assert whole.jobs.arrived_by(40_600.0 - 1e-9) == whole.jobs.arrived_by(39_999.0) + len(late)


def test_an_unknown_trace_or_variant_is_refused_by_name(traces: Path) -> None:
    with pytest.raises(UnknownTraceError, match="not a trace"):
        load_trace("google-2011", traces)
    with pytest.raises(FileNotFoundError, match=r"variants: .*default"):
        load_trace("openb:nosuch", traces)


def _copy(traces: Path, relative: Path, tmp_path: Path) -> Path:
    (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(traces / relative, tmp_path / relative)
    return tmp_path / relative


def test_a_malformed_openb_row_names_file_line_and_column(traces: Path, tmp_path: Path) -> None:
    _copy(traces, OPENB / "openb_node_list_all_node.csv", tmp_path)
    pods = _copy(traces, OPENB / "openb_pod_list_default.csv", tmp_path)
    lines = pods.read_text().splitlines()
    cells = lines[3].split(",")
    cells[1] = "six"  # cpu_milli
    lines[3] = ",".join(cells)
    pods.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceFormatError) as error:
        load_trace("openb", tmp_path)
    assert (error.value.file, error.value.line, error.value.column) == (str(pods), 4, "cpu_milli")


def test_a_malformed_swf_line_names_its_field(traces: Path, tmp_path: Path) -> None:
    path = tmp_path / NASA
    path.parent.mkdir(parents=True)
    with gzip.open(traces / NASA, "rt") as f:
        lines = f.read().splitlines()
    index = next(i for i, line in enumerate(lines) if not line.startswith(";"))
    fields = lines[index].split()
    fields[3] = "soon"
    lines[index] = " ".join(fields)
    with gzip.open(path, "wt") as f:
        f.write("\n".join(lines) + "\n")
    with pytest.raises(TraceFormatError) as error:
        load_trace("nasa-ipsc", tmp_path)
    assert error.value.line == index + 1 and error.value.column == "4 (run time)"


def test_a_malformed_alibaba_row_names_its_column(traces: Path, tmp_path: Path) -> None:
    _copy(traces, ALIBABA / "server_event.csv", tmp_path)
    tasks = _copy(traces, ALIBABA / "batch_task.csv", tmp_path)
    lines = tasks.read_text().splitlines()
    cells = lines[2].split(",")
    cells[4] = "many"
    lines[2] = ",".join(cells)
    tasks.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceFormatError) as error:
        load_trace("alibaba-2017", tmp_path)
    assert (error.value.line, error.value.column) == (3, "number_of_instances")
