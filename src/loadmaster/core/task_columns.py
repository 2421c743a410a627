"""Per-task columns of a cluster's jobs, reused from the previous cycle for the jobs it shares.

The control plane schedules a cluster that changes little from one cycle to the next. Its jobs come in
age order and new jobs are the newest, so this cycle's job tuple and the previous one share a long
prefix of the very same (immutable) ``Job`` objects (equal ones would do as well). Everything a
snapshot derives from a task alone (its request row, where the input places it, ...) or from a job
(its queue, profile, staleness) is kept as columns, with the sums every session starts from
(``input_sums.py``); a new snapshot takes the shared prefix's columns by slicing and computes only the
rest task by task. Without a previous (``loadmaster simulate``, tests) everything is computed, the same
way.

The prefix is taken only when the node order is the same (node indices are stored) and the resource
order comes out the same (request rows are stored); otherwise everything is computed again. A
property test checks that the columns always equal the ones computed from scratch.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import accumulate

import numpy as np
import numpy.typing as npt

from loadmaster.core.input_sums import InputSums, input_sums
from loadmaster.core.model import Job, Task, TaskStatus
from loadmaster.core.resources import CPU, GPU, MEMORY

IntArray = npt.NDArray[np.int64]
BASE_RESOURCES = (CPU, MEMORY, GPU)
_BASE = frozenset(BASE_RESOURCES)
NO_NODE = -1

# kube-scheduler's non-zero request rule, used only by the spread/binpack strategy scores.
DEFAULT_SCORE_CPU_MILLI = 100
DEFAULT_SCORE_MEMORY_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class TaskColumns:
    """Arrays are read-only: a snapshot uses them as they are, and the next cycle slices them."""

    jobs: tuple[Job, ...]
    node_names: tuple[str, ...]
    resources: tuple[str, ...]  # cpu, memory, gpu, then every other resource of a node or task, sorted
    tasks: tuple[Task, ...]  # every task, job by job
    task_job: npt.NDArray[np.int32]  # [T] the task's job
    job_tasks: tuple[range, ...]  # [J] the job's tasks (contiguous)
    queue_names: tuple[str, ...]  # the queues the jobs name, sorted: a job's queue code indexes it
    job_queue_code: npt.NDArray[np.int32]  # [J] the job's queue, as a code
    job_preemptible: npt.NDArray[np.bool_]  # [J]
    job_stale_for_s: npt.NDArray[np.float64]  # [J] how long the job has been reported stale, NaN if not
    profiles: tuple[tuple[str, int], ...]  # (profile, jobs naming it), sorted, for the jobs that name one
    request: IntArray  # [R, T] as written
    request_nz: IntArray  # [R, T] with the non-zero defaults for omitted cpu / memory
    node: npt.NDArray[np.int32]  # [T] node of a task the input has Running or Releasing, else NO_NODE
    releasing: npt.NDArray[np.bool_]  # [T] the input has it Releasing on ``node``
    extras: npt.NDArray[np.bool_]  # [T] host ports, volume claims or gpus: all (placed task by task)
    extended: IntArray  # tasks that request a resource beyond cpu, memory and gpu
    sums: InputSums  # per node and per queue code (input_sums.py)


def shared_prefix(previous: tuple[Job, ...], jobs: tuple[Job, ...], chunk: int = 512) -> int:
    """How many leading jobs are the same (identical, or equal: a job's columns depend on its value only).

    Tuple comparison runs in C and short-cuts identical elements, so a chunk of the very same objects
    costs a few ns per job; the first chunk that differs is bisected (equal prefixes are monotone)."""
    limit = min(len(previous), len(jobs))
    start = 0
    while start < limit:
        end = min(start + chunk, limit)
        if previous[start:end] != jobs[start:end]:
            low, high = start, end - 1  # previous[start:low] equals; the first difference is <= high
            while low < high:
                middle = (low + high + 1) // 2
                if previous[start:middle] == jobs[start:middle]:
                    low = middle
                else:
                    high = middle - 1
            return low
        start = end
    return limit


def task_columns(
    jobs: tuple[Job, ...],
    node_names: tuple[str, ...],
    node_index: dict[str, int],
    node_resources: frozenset[str],
    previous: TaskColumns | None = None,
) -> TaskColumns:
    """The columns of ``jobs``; those of the prefix shared with ``previous`` are taken from it.

    ``node_resources``: every resource name some node has (it enters the resource order)."""
    same_nodes = previous is not None and previous.node_names == node_names
    kj = shared_prefix(previous.jobs, jobs) if previous is not None and same_nodes else 0
    return _frozen(_columns(jobs, node_names, node_index, node_resources, previous if kj else None, kj))


def _frozen(columns: TaskColumns) -> TaskColumns:
    for array in (columns.task_job, columns.job_queue_code, columns.job_preemptible, columns.job_stale_for_s,
                  columns.request, columns.request_nz, columns.node, columns.releasing, columns.extras,
                  columns.extended):  # fmt: skip
        array.flags.writeable = False
    columns.sums.frozen()
    return columns


def _columns(
    jobs: tuple[Job, ...],
    node_names: tuple[str, ...],
    node_index: dict[str, int],
    node_resources: frozenset[str],
    previous: TaskColumns | None,
    kj: int,
) -> TaskColumns:
    kt = previous.job_tasks[kj - 1].stop if previous is not None and kj else 0
    suffix_jobs = jobs[kj:]
    lengths = [len(job.tasks) for job in suffix_jobs]
    suffix = [task for job in suffix_jobs for task in job.tasks]
    # One Python pass over the new tasks; everything else is slicing and vectors.
    running, releasing_status = TaskStatus.RUNNING, TaskStatus.RELEASING
    nodes: list[int] = []
    releasing: list[bool] = []
    extras: list[bool] = []
    extended: list[int] = []
    for t, task in enumerate(suffix, start=kt):
        status = task.status
        on_node = task.node is not None and (status is running or status is releasing_status)
        nodes.append(node_index[task.node] if on_node and task.node is not None else NO_NODE)
        releasing.append(on_node and status is releasing_status)
        extras.append(bool(task.ports or task.volumes or task.gpu_all))
        if not task.request.keys() <= _BASE:
            extended.append(t)
    kept = previous.extended[previous.extended < kt] if previous is not None else np.zeros(0, np.int64)
    all_extended = np.concatenate([kept, np.array(extended, dtype=np.int64)])
    prefix_tasks = previous.tasks[:kt] if previous is not None else ()
    tasks = prefix_tasks + tuple(suffix)
    task_resources: set[str] = set().union(*(tasks[t].request for t in all_extended.tolist()))
    others = (node_resources | task_resources) - _BASE
    resources = (*BASE_RESOURCES, *sorted(others))
    if previous is not None and resources != previous.resources:  # rows are laid out anew: no reuse
        return _columns(jobs, node_names, node_index, node_resources, None, 0)
    request, request_nz = _requests(suffix, resources)
    starts = list(accumulate(lengths, initial=kt))
    suffix_ranges = tuple(map(range, starts[:-1], starts[1:]))
    suffix_task_job = np.repeat(np.arange(len(suffix_jobs), dtype=np.int32), lengths)
    job_preemptible = np.array([job.preemptible for job in suffix_jobs], dtype=np.bool_)
    stale = np.array([np.nan if job.stale_for_s is None else job.stale_for_s for job in suffix_jobs])
    queues = _QueueCodes(previous, kj, suffix_jobs)
    node_column = np.array(nodes, dtype=np.int32)
    releasing_column = np.array(releasing, dtype=np.bool_)
    sums = input_sums(
        request, request_nz, node_column, releasing_column, queues.suffix[suffix_task_job],
        job_preemptible[suffix_task_job], len(node_names), len(queues.names),
    )  # fmt: skip
    profiles = Counter(job.profile for job in suffix_jobs if job.profile)
    if previous is None:
        return TaskColumns(
            jobs, node_names, resources, tasks, suffix_task_job, suffix_ranges, queues.names, queues.suffix,
            job_preemptible, stale, tuple(sorted(profiles.items())), request, request_nz, node_column,
            releasing_column, np.array(extras, dtype=np.bool_), all_extended, sums,
        )  # fmt: skip
    profiles.update(dict(previous.profiles))
    profiles.subtract(job.profile for job in previous.jobs[kj:] if job.profile)
    return TaskColumns(
        jobs,
        node_names,
        resources,
        tasks,
        np.concatenate([previous.task_job[:kt], suffix_task_job + kj]),
        previous.job_tasks[:kj] + suffix_ranges,
        queues.names,
        np.concatenate([queues.remap[previous.job_queue_code[:kj]], queues.suffix]),
        np.concatenate([previous.job_preemptible[:kj], job_preemptible]),
        np.concatenate([previous.job_stale_for_s[:kj], stale]),
        tuple(sorted((name, count) for name, count in profiles.items() if count)),
        np.concatenate([previous.request[:, :kt], request], axis=1),
        np.concatenate([previous.request_nz[:, :kt], request_nz], axis=1),
        np.concatenate([previous.node[:kt], node_column]),
        np.concatenate([previous.releasing[:kt], releasing_column]),
        np.concatenate([previous.extras[:kt], np.array(extras, dtype=np.bool_)]),
        all_extended,
        previous.sums.carried(_dropped_sums(previous, kt), queues.remap, len(queues.names)).plus(sums),
    )


class _QueueCodes:
    """The queue names of the current jobs (sorted) and codes: for the new jobs (``suffix``), and the
    previous cycle's codes moved to the current ones (``remap``, -1 for a queue no job names now)."""

    def __init__(self, previous: TaskColumns | None, kj: int, suffix_jobs: tuple[Job, ...]) -> None:
        named = {job.queue for job in suffix_jobs}
        if previous is not None:
            used = np.bincount(previous.job_queue_code[:kj], minlength=len(previous.queue_names))
            named.update(previous.queue_names[c] for c in np.flatnonzero(used).tolist())
        self.names = tuple(sorted(named))
        code = {name: c for c, name in enumerate(self.names)}
        self.suffix = np.array([code[job.queue] for job in suffix_jobs], dtype=np.int32)
        old = previous.queue_names if previous is not None else ()
        self.remap = np.array([code.get(name, -1) for name in old], dtype=np.int32)


def _dropped_sums(previous: TaskColumns, kt: int) -> InputSums:
    """The sums of the previous cycle's tasks past the shared prefix."""
    job = previous.task_job[kt:]
    return input_sums(
        previous.request[:, kt:], previous.request_nz[:, kt:], previous.node[kt:], previous.releasing[kt:],
        previous.job_queue_code[job], previous.job_preemptible[job], len(previous.node_names),
        len(previous.queue_names),
    )  # fmt: skip


def _requests(tasks: list[Task], resources: tuple[str, ...]) -> tuple[IntArray, IntArray]:
    """[R, T] requests as written, and with kube-scheduler's non-zero defaults for omitted cpu / memory."""
    requests = [task.request for task in tasks]
    rows = [[request.get(name, 0) for request in requests] for name in resources]
    request = np.array(rows, dtype=np.int64).reshape(len(resources), len(tasks))
    request_nz = request.copy()
    request_nz[0, [t for t, task in enumerate(tasks) if task.omits_cpu]] = DEFAULT_SCORE_CPU_MILLI
    request_nz[1, [t for t, task in enumerate(tasks) if task.omits_memory]] = DEFAULT_SCORE_MEMORY_BYTES
    return request, request_nz
