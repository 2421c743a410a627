"""The Alibaba 2017 cluster trace (``alibaba-v2017``): batch tasks of ``instance_num`` replicas on 1,313
machines of 64 cores.

Each row of ``batch_task.csv`` is one job (a trace "task") of ``instance_num`` identical one-instance
tasks (not a gang: each instance runs on its own), arriving at ``task_create_time`` and running
``task_end_time - task_create_time`` seconds. CPU: ``plan_cpu`` 100 = one core. Memory is normalized in
the trace (the largest machine has 1.0); it is read here as 1.0 = ``MEMORY_SCALE`` bytes on machines and
requests alike, so what fits is what the trace says fits. Rows without a CPU request (mostly tasks still
Waiting when the trace ended) or with an end before their start are left out and counted in the
trace's name. ``alibaba-2017:N`` keeps the first N tasks by arrival.
"""

from __future__ import annotations

import csv
from pathlib import Path

from loadmaster.core.model import Job, Node, Task
from loadmaster.replay.trace import Trace, TraceFormatError, TraceJob

FOLDER = Path("alibaba-v2017")
MEMORY_SCALE = 2**40  # normalized memory 1.0 -> 1 TiB (see the module docstring)
CORE = 1000  # millicores
_CREATE, _END, _JOB, _TASK, _INSTANCES, _STATUS, _CPU, _MEMORY = range(8)


def read_alibaba_2017(data: Path, variant: str | None) -> Trace:
    first = _first_count(variant)
    nodes = _machines(data / FOLDER / "server_event.csv")
    rows, skipped = _task_rows(data / FOLDER / "batch_task.csv")
    rows.sort(key=lambda row: row[0])  # by arrival; stable, so file order among equals
    jobs = []
    for created, ended, name, instances, cpu, memory in rows[:first]:
        request = {"cpu": cpu, "memory": memory}
        tasks = tuple(Task(f"{name}-{i}", name, request) for i in range(instances))
        jobs.append(TraceJob(Job(name, tasks), created, ended - created))
    label = f"alibaba-2017{':' + variant if variant else ''} ({skipped} rows without a request left out)"
    return Trace(label, nodes, tuple(jobs))


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


Row = tuple[float, float, str, int, int, int]


def _task_rows(path: Path) -> tuple[list[Row], int]:
    rows: list[Row] = []
    skipped = 0
    with open(path, newline="") as f:
        reader = csv.reader(f)
        next(reader, None)  # the header the copying repository added
        for line, row in enumerate(reader, start=2):
            if len(row) != 8:
                raise TraceFormatError(str(path), line, "all", f"{len(row)} columns, expected 8")
            created, ended = (
                _float(row, _CREATE, "task_create_time", path, line),
                _float(row, _END, "task_end_time", path, line),
            )
            if not row[_CPU].strip() or ended < created:
                skipped += 1
                continue
            instances = int(_float(row, _INSTANCES, "number_of_instances", path, line))
            cpu = int(_float(row, _CPU, "plan_cpu", path, line) * CORE / 100)
            memory = int(_float(row, _MEMORY, "plan_mem", path, line) * MEMORY_SCALE)
            rows.append((created, ended, f"task-{row[_JOB]}-{row[_TASK]}", instances, cpu, memory))
    return rows, skipped


def _float(row: list[str], position: int, column: str, path: Path, line: int) -> float:
    try:
        return float(row[position])
    except ValueError:
        raise TraceFormatError(str(path), line, column, f"not a number: {row[position]!r}") from None
