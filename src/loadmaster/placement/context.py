"""What the plugins need to know about the one task being placed, computed once per task."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.model import Task
from loadmaster.core.resources import CPU, MEMORY

IntArray = npt.NDArray[np.int64]
Rows = slice | IntArray


def as_rows(rows: IntArray) -> Rows:
    """A contiguous run of rows as a slice: numpy then returns views instead of copies."""
    if rows.size and int(rows[-1]) - int(rows[0]) + 1 == rows.size:
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


@dataclass(slots=True)
class TaskContext:
    snapshot: ClusterSnapshot
    t: int
    task: Task
    request: IntArray  # [R] as written
    request_nz: IntArray  # [R] with the non-zero defaults (spread/binpack only)
    gpu: int  # milli-GPU requested
    fit_rows: IntArray  # non-GPU resource rows the task requests (> 0): the rows that can fail to fit
    score_rows: IntArray  # rows a strategy scores: cpu, memory, and every other requested resource
    fit_index: Rows  # fit_rows as a slice when contiguous (views, not copies)
    score_index: Rows
    overcommit: bool  # the task opted in: its free room includes the nodes' overcommit room
    gpu_all: bool  # ``gpus: all`` with no count yet: every device of a node, which must all be free

    @classmethod
    def of(cls, snapshot: ClusterSnapshot, t: int) -> TaskContext:
        request = snapshot.task_request[:, t]
        gpu_row = snapshot.gpu_row
        requested = np.flatnonzero(request > 0)
        fit_rows = requested[requested != gpu_row]
        base = [snapshot.res_index[CPU], snapshot.res_index[MEMORY]]
        score_rows = np.array(sorted(set(base) | {int(r) for r in requested}), dtype=np.int64)
        return cls(
            snapshot=snapshot,
            t=t,
            task=snapshot.tasks[t],
            request=request,
            request_nz=snapshot.task_request_nz[:, t],
            gpu=int(request[gpu_row]),
            fit_rows=fit_rows.astype(np.int64),
            score_rows=score_rows,
            fit_index=as_rows(fit_rows.astype(np.int64)),
            score_index=as_rows(score_rows),
            overcommit=snapshot.tasks[t].overcommit,
            gpu_all=snapshot.tasks[t].gpu_all and not request[gpu_row],
        )
