"""What the plugins need to know about the one task being placed, computed once per task."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from loadmaster.core.model import Task
from loadmaster.core.resources import CPU, MEMORY
from loadmaster.core.snapshot import ClusterSnapshot

IntArray = npt.NDArray[np.int64]


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
    cache: dict[str, object] = field(default_factory=dict)  # per-task memo shared by plugins

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
        )
