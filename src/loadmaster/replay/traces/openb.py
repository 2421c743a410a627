"""The Alibaba GPU trace "openb" (``alibaba-gpu-v2023-openb/csv``): 1,523 nodes and a pod list.

``openb:VARIANT`` reads ``openb_pod_list_VARIANT.csv`` (``default`` when no variant is given). Each pod is
a one-task job requesting ``cpu_milli``, ``memory_mib`` and GPUs: ``num_gpu`` whole GPUs, or ``gpu_milli``
thousandths of one (``num_gpu`` 1 and ``gpu_milli`` < 1000: a shared GPU); ``gpu_spec`` lists the GPU
models it accepts (``A|B``). It arrives at ``creation_time`` and runs ``deletion_time - scheduled_time``
seconds (``deletion_time - creation_time`` for a pod that was never scheduled). Pod lists without the
time columns (the ``multigpu`` variants) arrive at once and run to the end.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from loadmaster.core.model import Job, Node, Task
from loadmaster.core.resources import GPU_DEVICE
from loadmaster.replay.trace import Arrivals, Trace, TraceFormatError, TraceJob

FOLDER = Path("alibaba-gpu-v2023-openb") / "csv"
NODE_LIST = "openb_node_list_all_node.csv"
GPU_NODE_LIST = "openb_node_list_gpu_node.csv"
MI = 2**20
Pod = tuple[str, dict[str, int], tuple[str, ...] | None]  # name, request, accepted GPU models


def read_openb(data: Path, variant: str | None) -> Trace:
    folder = data / FOLDER
    pods = folder / f"openb_pod_list_{variant or 'default'}.csv"
    if not pods.is_file():
        known = sorted(p.stem.removeprefix("openb_pod_list_") for p in folder.glob("openb_pod_list_*.csv"))
        raise FileNotFoundError(f"{pods}: no such pod list (variants: {', '.join(known) or 'none found'})")
    jobs = Arrivals.of(_pod_jobs(pods))  # stable: file order among equal arrivals
    return Trace(f"openb:{variant or 'default'}", openb_nodes(folder / NODE_LIST), jobs)


def openb_nodes(path: Path) -> tuple[Node, ...]:
    nodes = []
    for line, row in _rows(path):
        alloc = {
            "cpu": _int(row, "cpu_milli", path, line),
            "memory": _int(row, "memory_mib", path, line) * MI,
            "gpu": _int(row, "gpu", path, line) * GPU_DEVICE,
        }
        nodes.append(Node(row["sn"], alloc, alloc, gpu_model=row.get("model") or None))
    return tuple(nodes)


def openb_pods(path: Path) -> list[Pod]:
    """The pods of a pod list, in file order: (name, request, accepted GPU models)."""
    return [_pod(row, path, line) for line, row in _rows(path)]


def _pod(row: dict[str, str], path: Path, line: int) -> Pod:
    num_gpu, gpu_milli = _int(row, "num_gpu", path, line), _int(row, "gpu_milli", path, line)
    request = {"cpu": _int(row, "cpu_milli", path, line), "memory": _int(row, "memory_mib", path, line) * MI}
    if num_gpu:
        request["gpu"] = gpu_milli if num_gpu == 1 and gpu_milli < GPU_DEVICE else num_gpu * GPU_DEVICE
    spec = row.get("gpu_spec") or ""
    models = tuple(spec.split("|")) if num_gpu and spec and spec != "nan" else None
    return row["name"], request, models


def _pod_jobs(path: Path) -> Iterator[TraceJob]:
    for line, row in _rows(path):
        name, request, models = _pod(row, path, line)
        job = Job(name, (Task(name, name, request, gpu_models=models),))
        if "creation_time" not in row:
            yield TraceJob(job, 0.0, None)
            continue
        created = _int(row, "creation_time", path, line)
        ended = _int(row, "deletion_time", path, line)
        scheduled = row.get("scheduled_time") or ""
        started = _int(row, "scheduled_time", path, line) if scheduled not in ("", "nan") else created
        if ended < started:
            raise TraceFormatError(
                str(path), line, "deletion_time", f"{ended} is before the pod started ({started})"
            )
        yield TraceJob(job, float(created), float(ended - started))


def _rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """Each row with its line number (the header is line 1)."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        for row in reader:
            yield reader.line_num, row


def _int(row: dict[str, str], column: str, path: Path, line: int) -> int:
    value = row.get(column)
    if value is None:
        raise TraceFormatError(str(path), line, column, "missing")
    try:
        return int(value)
    except ValueError:
        raise TraceFormatError(str(path), line, column, f"expected an integer, got {value!r}") from None
