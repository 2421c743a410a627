"""The NASA Ames iPSC/860 log (``pwa-nasa-ipsc-1993``, Standard Workload Format): rigid gang jobs on a
128-node machine.

Each line is a job: field 2 its submit time, field 4 its run time, field 5 the processors it held. A job
is a gang of that many one-processor tasks (``min_available`` = all of them: it runs whole or not at
all) on 128 nodes of one processor each. The log's submit times are its start times (its header says
so), so the recorded waits are all zero: what a replay shows is the wait a scheduler would have made.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

from loadmaster.core.model import Job, Node, Task
from loadmaster.replay.trace import Arrivals, Trace, TraceFormatError, TraceJob

FILE = Path("pwa-nasa-ipsc-1993") / "NASA-iPSC-1993-3.1-cln.swf.gz"
NODES = 128
PROCESSOR = {"cpu": 1000, "memory": 2**30}  # one node: one processor (its memory is not in the log)
FIELDS = 18
_SUBMIT, _RUN, _PROCESSORS = 1, 3, 4  # 0-based positions of fields 2, 4 and 5


def read_nasa_ipsc(data: Path, variant: str | None) -> Trace:
    if variant:
        raise ValueError(f"nasa-ipsc has no variants (got {variant!r})")
    path = data / FILE
    nodes = tuple(Node(f"ipsc-{i:03d}", dict(PROCESSOR), dict(PROCESSOR)) for i in range(NODES))
    return Trace("nasa-ipsc", nodes, Arrivals.of(_jobs(path)))


def _jobs(path: Path) -> Iterator[TraceJob]:
    with gzip.open(path, "rt") as f:
        for line_number, line in enumerate(f, start=1):
            if line.startswith(";") or not line.strip():
                continue
            fields = line.split()
            if len(fields) != FIELDS:
                raise TraceFormatError(
                    str(path), line_number, "all", f"{len(fields)} fields, expected {FIELDS}"
                )
            submit = _number(fields, _SUBMIT, "submit time", path, line_number)
            runtime = _number(fields, _RUN, "run time", path, line_number)
            processors = int(_number(fields, _PROCESSORS, "allocated processors", path, line_number))
            if not 1 <= processors <= NODES:
                raise TraceFormatError(
                    str(path), line_number, "5 (allocated processors)", f"{processors} is outside 1..{NODES}"
                )
            name = f"ipsc-job-{fields[0]}"
            tasks = tuple(Task(f"{name}-{i}", name, {"cpu": 1000}) for i in range(processors))
            yield TraceJob(Job(name, tasks, min_available=processors), submit, max(runtime, 0.0))


def _number(fields: list[str], position: int, what: str, path: Path, line: int) -> float:
    try:
        value = float(fields[position])
    except ValueError:
        raise TraceFormatError(
            str(path), line, f"{position + 1} ({what})", f"not a number: {fields[position]!r}"
        ) from None
    if value < 0:
        raise TraceFormatError(
            str(path), line, f"{position + 1} ({what})", f"unknown (-1) or negative: {value:g}"
        )
    return value
