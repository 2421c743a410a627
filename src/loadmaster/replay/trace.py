"""What a trace reader produces: the cluster's nodes and the jobs that arrive, in arrival order."""

from __future__ import annotations

from dataclasses import dataclass, field

from loadmaster.core.model import Job, Node, Queue


@dataclass(frozen=True, slots=True)
class TraceJob:
    """One job of a trace: it arrives at ``arrival_s`` with every task Pending; once placed, each task
    runs ``runtime_s`` (None: until the end of the replay), whenever it starts (late starts keep the
    recorded runtime)."""

    job: Job
    arrival_s: float
    runtime_s: float | None


@dataclass(frozen=True, slots=True)
class Trace:
    name: str
    nodes: tuple[Node, ...]
    jobs: tuple[TraceJob, ...]  # by arrival time, then file order
    queues: tuple[Queue, ...] = field(default=())


class TraceFormatError(ValueError):
    """A row a reader cannot use: names the file, the line and the column."""

    def __init__(self, file: str, line: int, column: str, message: str) -> None:
        super().__init__(f"{file}:{line}: column {column}: {message}")
        self.file, self.line, self.column = file, line, column
