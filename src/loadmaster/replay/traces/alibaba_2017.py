"""The Alibaba 2017 cluster trace (``alibaba-v2017``): batch tasks of ``instance_num`` replicas on 1,313
machines of 64 cores.

Each row of ``batch_task.csv`` is one job (a trace "task") of ``instance_num`` identical one-instance
tasks (not a gang: each instance runs on its own), arriving at ``task_create_time`` and running
``task_end_time - task_create_time`` seconds. CPU: ``plan_cpu`` 100 = one core. Memory is normalized in
the trace (the largest machine has 1.0); it is read here as 1.0 = ``MEMORY_SCALE`` bytes on machines and
requests alike, so what fits is what the trace says fits. Rows without a CPU request (mostly tasks still
Waiting when the trace ended) or with an end before their start are left out and counted in the
trace's name. ``alibaba-2017:N`` keeps the first N tasks by arrival.

The rows are parsed into numeric columns and sorted by arrival as an index (``argsort``); a task's
``Job`` and its instances are made only when the replay reads it (``trace.Arrivals``): the whole trace
as objects would be 11 M instances, ~10 GB.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from loadmaster.core.model import Job, Node, Task
from loadmaster.replay.trace import Arrivals, FloatArray, IntArray, Trace, TraceFormatError, TraceJob

FOLDER = Path("alibaba-v2017")
MEMORY_SCALE = 2**40  # normalized memory 1.0 -> 1 TiB (see the module docstring)
CORE = 1000  # millicores
_CREATE, _END, _JOB, _TASK, _INSTANCES, _STATUS, _CPU, _MEMORY = range(8)


def read_alibaba_2017(data: Path, variant: str | None) -> Trace:
    first = _first_count(variant)
    nodes = _machines(data / FOLDER / "server_event.csv")
    rows, skipped = _task_rows(data / FOLDER / "batch_task.csv")
    order = np.argsort(rows.created, kind="stable")[:first]  # by arrival; file order among equals
    arrivals = Arrivals(rows.created[order], rows.instances[order], _TaskJobs(rows, order))
    label = f"alibaba-2017{':' + variant if variant else ''} ({skipped} rows without a request left out)"
    return Trace(label, nodes, arrivals)


@dataclass(frozen=True, slots=True)
class _TaskRows:
    """The kept rows of ``batch_task.csv``, in file order, as columns."""

    created: FloatArray
    ended: FloatArray
    names: tuple[str, ...]
    instances: IntArray
    cpu: IntArray  # millicores per instance
    memory: IntArray  # bytes per instance (see MEMORY_SCALE)


@dataclass(frozen=True, slots=True)
class _TaskJobs:
    """Makes the i-th task by arrival (``order[i]`` of the rows): a job of its independent instances."""

    rows: _TaskRows
    order: IntArray

    def __call__(self, i: int) -> TraceJob:
        row, rows = int(self.order[i]), self.rows
        name = rows.names[row]
        request = {"cpu": int(rows.cpu[row]), "memory": int(rows.memory[row])}  # one dict for all
        tasks = tuple(Task(f"{name}-{k}", name, request) for k in range(int(rows.instances[row])))
        created = float(rows.created[row])
        return TraceJob(Job(name, tasks), created, float(rows.ended[row]) - created)


def _first_count(variant: str | None) -> int | None:
    if not variant:
        return None
    if not variant.isdigit() or int(variant) < 1:
        raise ValueError(f"alibaba-2017:N takes a positive number of tasks, got {variant!r}")
    return int(variant)


def _machines(path: Path) -> tuple[Node, ...]:
    nodes: dict[str, Node] = {}
    with open(path, newline="") as f:
        for line, row in enumerate(csv.reader(f), start=1):
            if len(row) < 7:
                raise TraceFormatError(str(path), line, "all", f"{len(row)} columns, expected 7")
            if row[2] != "add":
                continue
            cpus = _float(row, 4, "cpus", path, line)
            memory = _float(row, 5, "mem", path, line)
            alloc = {"cpu": int(cpus * CORE), "memory": int(memory * MEMORY_SCALE)}
            nodes[f"m{row[1]}"] = Node(f"m{row[1]}", alloc, alloc)
    return tuple(nodes.values())


def _task_rows(path: Path) -> tuple[_TaskRows, int]:
    created: list[float] = []
    ended: list[float] = []
    names: list[str] = []
    instances: list[int] = []
    cpus: list[int] = []
    memories: list[int] = []
    skipped = 0
    with open(path, newline="") as f:
        reader = csv.reader(f)
        next(reader, None)  # the header the copying repository added
        for line, row in enumerate(reader, start=2):
            if len(row) != 8:
                raise TraceFormatError(str(path), line, "all", f"{len(row)} columns, expected 8")
            start, end = (
                _float(row, _CREATE, "task_create_time", path, line),
                _float(row, _END, "task_end_time", path, line),
            )
            if not row[_CPU].strip() or end < start:
                skipped += 1
                continue
            instances.append(int(_float(row, _INSTANCES, "number_of_instances", path, line)))
            cpus.append(int(_float(row, _CPU, "plan_cpu", path, line) * CORE / 100))
            memories.append(int(_float(row, _MEMORY, "plan_mem", path, line) * MEMORY_SCALE))
            created.append(start)
            ended.append(end)
            names.append(f"task-{row[_JOB]}-{row[_TASK]}")
    rows = _TaskRows(
        np.array(created, dtype=np.float64),
        np.array(ended, dtype=np.float64),
        tuple(names),
        np.array(instances, dtype=np.int64),
        np.array(cpus, dtype=np.int64),
        np.array(memories, dtype=np.int64),
    )
    return rows, skipped


def _float(row: list[str], position: int, column: str, path: Path, line: int) -> float:
    try:
        return float(row[position])
    except ValueError:
        raise TraceFormatError(str(path), line, column, f"not a number: {row[position]!r}") from None
