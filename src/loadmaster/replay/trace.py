"""What a trace reader produces: the cluster's nodes and the jobs that arrive, in arrival order.

A trace's jobs are ``Arrivals``: a sequence in arrival order that knows every job's arrival time and
task count as compact arrays, and makes a job (its ``Job`` and ``Task`` objects) only when it is read.
A replay reads each job when it arrives and lets it go when its tasks leave, so a trace of millions of
tasks (alibaba-2017: 11 M instances) never holds them all at once. A reader with few jobs hands over the
jobs it made (``Arrivals.of``); one with many hands over its parsed columns and a function that makes
the i-th job from them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np
import numpy.typing as npt

from loadmaster.core.model import Job, Node, Queue

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class TraceJob:
    """One job of a trace: it arrives at ``arrival_s`` with every task Pending; once placed, each task
    runs ``runtime_s`` (None: until the end of the replay), whenever it starts (late starts keep the
    recorded runtime)."""

    job: Job
    arrival_s: float
    runtime_s: float | None


class Arrivals(Sequence[TraceJob]):
    """A trace's jobs by arrival time, then file order; job i is ``make(offset + i)``, made when read
    (reading it twice makes it twice: equal jobs, not the same objects)."""

    __slots__ = ("_make", "_offset", "arrival_s", "task_counts")

    def __init__(
        self,
        arrival_s: FloatArray,
        task_counts: IntArray,
        make: Callable[[int], TraceJob],
        offset: int = 0,
    ) -> None:
        """``arrival_s``, ``task_counts``: per job, in arrival order (ascending ``arrival_s``)."""
        self.arrival_s, self.task_counts = arrival_s, task_counts
        self._make, self._offset = make, offset

    @classmethod
    def of(cls, jobs: Iterable[TraceJob]) -> Arrivals:
        """Jobs already made, sorted by arrival (stable: their order among equal arrivals is kept)."""
        ordered = tuple(sorted(jobs, key=lambda job: job.arrival_s))
        arrival_s = np.array([job.arrival_s for job in ordered], dtype=np.float64)
        task_counts = np.array([len(job.job.tasks) for job in ordered], dtype=np.int64)
        return cls(arrival_s, task_counts, ordered.__getitem__)

    def __len__(self) -> int:
        return len(self.arrival_s)

    @overload
    def __getitem__(self, index: int) -> TraceJob: ...
    @overload
    def __getitem__(self, index: slice) -> Arrivals: ...
    def __getitem__(self, index: int | slice) -> TraceJob | Arrivals:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                raise ValueError("Arrivals: a slice keeps arrival order (step 1)")
            stop = max(start, stop)
            return Arrivals(
                self.arrival_s[start:stop], self.task_counts[start:stop], self._make, self._offset + start
            )
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError(index)
        return self._make(self._offset + position)

    def __iter__(self) -> Iterator[TraceJob]:
        return map(self._make, range(self._offset, self._offset + len(self)))

    def between(self, start_s: float, end_s: float | None) -> Arrivals:
        """The jobs arriving in ``[start_s, end_s)`` (``end_s`` None: to the last)."""
        first = int(np.searchsorted(self.arrival_s, start_s, side="left"))
        last = len(self) if end_s is None else int(np.searchsorted(self.arrival_s, end_s, side="left"))
        return self[first:last]

    def arrived_by(self, at_s: float) -> int:
        """How many jobs arrive at or before ``at_s``."""
        return int(np.searchsorted(self.arrival_s, at_s, side="right"))

    @property
    def last_arrival_s(self) -> float:
        """The last job's arrival (0 for no jobs)."""
        return float(self.arrival_s[-1]) if len(self) else 0.0


@dataclass(frozen=True, slots=True)
class Trace:
    name: str
    nodes: tuple[Node, ...]
    jobs: Arrivals
    queues: tuple[Queue, ...] = field(default=())


class TraceFormatError(ValueError):
    """A row a reader cannot use: names the file, the line and the column."""

    def __init__(self, file: str, line: int, column: str, message: str) -> None:
        super().__init__(f"{file}:{line}: column {column}: {message}")
        self.file, self.line, self.column = file, line, column
