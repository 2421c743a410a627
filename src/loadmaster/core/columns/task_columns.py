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
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.input_sums import InputSums, input_sums
from loadmaster.core.model import Job, Task, TaskStatus
from loadmaster.core.resources import CPU, GPU, MEMORY
from loadmaster.core.voluntary_moves import REPLACEMENT_SUFFIX

IntArray = npt.NDArray[np.int64]
BASE_RESOURCES = (CPU, MEMORY, GPU)
_BASE = frozenset(BASE_RESOURCES)
NO_NODE = -1
# Above this many stretches of kept and fresh tasks, a task column is gathered through an index instead
# (``_Reuse.by_task``).
MAX_STRETCHES = 4096
_tasks_of = attrgetter("tasks")
_name_of = attrgetter("name")


def _joined(parts: Iterable[tuple[Task, ...]]) -> tuple[Task, ...]:
    """The tuples end to end. ``list.extend`` copies a whole tuple in one C call; ``chain`` steps item by
    item, about three times slower on a replay's million tasks (24 ms against 9 ms)."""
    out: list[Task] = []
    extend = out.extend
    for part in parts:
        extend(part)
    return tuple(out)


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
    replacements: IntArray  # tasks named as a replacement (``X.next``: core/voluntary_moves.py), ascending
    sums: InputSums  # per node and per queue code (input_sums.py)
    job_priority: IntArray  # [J] (the pending jobs' order, as vectors: actions/job_queue.py)
    job_min_available: IntArray  # [J]


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
    return _frozen(
        _columns(jobs, node_names, node_index, node_resources, previous if same_nodes else None, kj)
    )


def _frozen(columns: TaskColumns) -> TaskColumns:
    for array in (columns.task_job, columns.job_queue_code, columns.job_preemptible, columns.job_stale_for_s,
                  columns.job_priority, columns.job_min_available,
                  columns.request, columns.request_nz, columns.node, columns.releasing, columns.extras,
                  columns.extended, columns.replacements):  # fmt: skip
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
    reuse = _Reuse(previous, jobs, kj)
    if previous is not None and reuse.keeps_nothing:  # nothing to carry: computed as without one
        return _columns(jobs, node_names, node_index, node_resources, None, 0)
    fresh_jobs = reuse.fresh_jobs
    tasks = reuse.tasks()
    fresh = reuse.fresh_tasks(tasks)
    # One Python pass over the new tasks; everything else is slicing and vectors.
    running, releasing_status = TaskStatus.RUNNING, TaskStatus.RELEASING
    nodes: list[int] = []
    releasing: list[bool] = []
    extras: list[bool] = []
    extended: list[int] = []  # positions among the fresh tasks
    replacements: list[int] = []  # positions among the fresh tasks
    for f, task in enumerate(fresh):
        status = task.status
        on_node = task.node is not None and (status is running or status is releasing_status)
        nodes.append(node_index[task.node] if on_node and task.node is not None else NO_NODE)
        releasing.append(on_node and status is releasing_status)
        extras.append(bool(task.ports or task.volumes or task.gpu_all))
        if not task.request.keys() <= _BASE:
            extended.append(f)
        if task.name.endswith(REPLACEMENT_SUFFIX):
            replacements.append(f)
    all_extended = reuse.marked(None if previous is None else previous.extended, extended)
    all_replacements = reuse.marked(None if previous is None else previous.replacements, replacements)
    task_resources: set[str] = set().union(*(tasks[t].request for t in all_extended.tolist()))
    others = (node_resources | task_resources) - _BASE
    resources = (*BASE_RESOURCES, *sorted(others))
    if previous is not None and resources != previous.resources:  # rows are laid out anew: no reuse
        return _columns(jobs, node_names, node_index, node_resources, None, 0)
    request, request_nz = _requests(fresh, resources)
    fresh_task_job = reuse.fresh_task_job()  # [fresh tasks] the task's job among the fresh jobs
    job_preemptible = np.array([job.preemptible for job in fresh_jobs], dtype=np.bool_)
    priority = np.array([job.priority for job in fresh_jobs], dtype=np.int64)
    min_available = np.array([job.min_available for job in fresh_jobs], dtype=np.int64)
    stale = np.array([np.nan if job.stale_for_s is None else job.stale_for_s for job in fresh_jobs])
    queues = _QueueCodes(previous, reuse.kept_jobs, fresh_jobs)
    node_column = np.array(nodes, dtype=np.int32)
    releasing_column = np.array(releasing, dtype=np.bool_)
    extras_column = np.array(extras, dtype=np.bool_)
    sums = input_sums(
        request, request_nz, node_column, releasing_column, queues.suffix[fresh_task_job],
        job_preemptible[fresh_task_job], len(node_names), len(queues.names),
    )  # fmt: skip
    profiles = Counter(job.profile for job in fresh_jobs if job.profile)
    if previous is None:
        return TaskColumns(
            jobs, node_names, resources, tasks, fresh_task_job, reuse.job_tasks(), queues.names,
            queues.suffix, job_preemptible, stale, tuple(sorted(profiles.items())), request, request_nz,
            node_column, releasing_column, extras_column, all_extended, all_replacements, sums, priority,
            min_available,
        )  # fmt: skip
    profiles.update(dict(previous.profiles))
    profiles.subtract(
        previous.jobs[p].profile for p in reuse.dropped_jobs().tolist() if previous.jobs[p].profile
    )
    dropped_sums = _dropped_sums(previous, reuse.dropped_tasks())  # every previous task not kept
    return TaskColumns(
        jobs,
        node_names,
        resources,
        tasks,
        reuse.task_job(),
        reuse.job_tasks(),
        queues.names,
        reuse.by_job(queues.remap[previous.job_queue_code], queues.suffix),
        reuse.by_job(previous.job_preemptible, job_preemptible),
        reuse.by_job(previous.job_stale_for_s, stale),
        tuple(sorted((name, count) for name, count in profiles.items() if count)),
        reuse.by_task(previous.request, request),
        reuse.by_task(previous.request_nz, request_nz),
        reuse.by_task(previous.node, node_column),
        reuse.by_task(previous.releasing, releasing_column),
        reuse.by_task(previous.extras, extras_column),
        all_extended,
        all_replacements,
        previous.sums.carried(dropped_sums, queues.remap, len(queues.names)).plus(sums),
        reuse.by_job(previous.job_priority, priority),
        reuse.by_job(previous.job_min_available, min_available),
    )


class _Reuse:
    """Which of the current jobs and tasks are the previous cycle's very same objects, and where their
    columns are.

    The shared prefix (``kj`` jobs) is found by ``shared_prefix``; past it each job is looked up by
    identity among the previous jobs past the prefix (a replay's backlog of Pending jobs stays the same
    objects while jobs in front of it start or leave). A job found is *kept*: its tasks' columns are
    gathered from the previous ones; the others are *fresh*: their job columns are computed. A fresh job
    with a previous namesake of the same queue and preemptibility (the same job with some tasks started,
    stopped or gone: a replay rebuilds a job of thousands of tasks when one of them starts) keeps the
    columns of the tasks that are the very same objects as the namesake's; a task's columns depend on the
    task alone, and its share of the input sums on its job's queue and preemptibility, which are equal.
    Every other task is *fresh*: computed. Columns of the fresh tasks, in their order, fill the rest."""

    def __init__(self, previous: TaskColumns | None, jobs: tuple[Job, ...], kj: int) -> None:
        self.previous, self.jobs, self.kj = previous, jobs, kj
        n_jobs = len(jobs)
        source = np.full(n_jobs, -1, dtype=np.int64)  # [J] the previous index of a kept job, else -1
        if previous is not None:
            source[:kj] = np.arange(kj)
            if kj < n_jobs and kj < len(previous.jobs):
                # map/zip over ids: the loops run in C (this runs every cycle over the jobs past kj)
                where = dict(zip(map(id, previous.jobs[kj:]), range(kj, len(previous.jobs)), strict=True))
                source[kj:] = list(map(where.get, map(id, jobs[kj:]), repeat(-1)))
        self.source = source
        self._stretch_list: list[tuple[bool, int, int]] | Literal[False] | None = False  # not made yet
        kept = source >= 0
        self.kept = kept
        self.kept_jobs = source[kept]
        fresh_index = np.flatnonzero(~kept).tolist()
        self.fresh_jobs = tuple(jobs[j] for j in fresh_index)
        past = np.fromiter(map(len, map(_tasks_of, jobs[kj:])), dtype=np.int64, count=n_jobs - kj)
        namesakes = self._namesakes(fresh_index) if previous is not None else {}
        # Nothing kept past the prefix (the control plane's cycles: new jobs are the newest): every
        # column is the prefix's slice and the fresh tasks', as one concatenation, with no gather.
        self.prefix_only = previous is not None and kj > 0 and not kept[kj:].any() and not namesakes
        if self.prefix_only:
            assert previous is not None
            self.kt = previous.job_tasks[kj - 1].stop
            self.past_lengths = past
            self.past_starts = np.concatenate([[0], np.cumsum(past)]) + self.kt
            return
        # Job lengths: the previous columns' for the prefix (counted in C), Python only past it.
        previous_lengths = (
            np.bincount(previous.task_job, minlength=len(previous.jobs)).astype(np.int64)
            if previous is not None
            else np.zeros(0, dtype=np.int64)
        )
        self.lengths = np.concatenate([previous_lengths[:kj], past])
        starts = np.concatenate([[0], np.cumsum(self.lengths)])
        self.kt, self.past_starts = int(starts[kj]), starts[kj:]
        n_tasks = int(starts[-1])
        task_of_job = self.task_of_job = np.repeat(np.arange(n_jobs), self.lengths)
        if previous is not None and (self.kept_jobs.size or namesakes):
            previous_starts = np.concatenate([[0], np.cumsum(previous_lengths)])
            offset = np.arange(n_tasks) - starts[task_of_job]
            task_source = np.where(kept[task_of_job], previous_starts[source[task_of_job]] + offset, -1)
            for j, p in namesakes.items():  # task by task, by identity (the loops run in C)
                first = int(previous_starts[p])
                tasks_before = previous.jobs[p].tasks
                where = dict(zip(map(id, tasks_before), range(first, first + len(tasks_before)), strict=True))
                task_source[starts[j] : starts[j + 1]] = list(
                    map(where.get, map(id, jobs[j].tasks), repeat(-1))
                )
            self.task_source = task_source
        else:
            self.task_source = np.full(n_tasks, -1, dtype=np.int64)
        self.kept_task = self.task_source >= 0  # [T]

    @property
    def keeps_nothing(self) -> bool:
        return not self.prefix_only and not self.kept_task.any()

    def _namesakes(self, fresh_index: list[int]) -> dict[int, int]:
        """Fresh job -> the previous job of its name, when that job was not kept and has the same queue
        and preemptibility (the class docstring): its tasks may be kept one by one."""
        previous, kj = self.previous, self.kj
        assert previous is not None
        past = [j for j in fresh_index if j >= kj]
        if not past:
            return {}
        by_name = dict(zip(map(_name_of, previous.jobs[kj:]), range(kj, len(previous.jobs)), strict=True))
        taken = set(self.kept_jobs.tolist())
        found = {}
        for j in past:
            job = self.jobs[j]
            p = by_name.get(job.name)
            if p is not None and p not in taken:
                before = previous.jobs[p]
                if before.queue == job.queue and before.preemptible == job.preemptible:
                    found[j] = p
        return found

    def fresh_tasks(self, tasks: tuple[Task, ...]) -> list[Task]:
        """The tasks whose columns are computed, in task order."""
        if self.previous is None:
            return list(tasks)
        if self.prefix_only:
            return list(tasks[self.kt :])
        return [tasks[t] for t in np.flatnonzero(~self.kept_task).tolist()]

    def fresh_task_job(self) -> npt.NDArray[np.int32]:
        """[fresh tasks] each one's job, as its position among the fresh jobs."""
        if self.previous is None or self.prefix_only:
            lengths = [len(job.tasks) for job in self.fresh_jobs]
            return np.repeat(np.arange(len(self.fresh_jobs), dtype=np.int32), lengths)
        among_fresh = (np.cumsum(~self.kept) - 1).astype(np.int32)  # [J] a fresh job's position
        return among_fresh[self.task_of_job[~self.kept_task]]

    def tasks(self) -> tuple[Task, ...]:
        """Every task, job by job (the shared prefix's as one slice of the previous tuple)."""
        previous, kj = self.previous, self.kj
        # past the prefix lies a replay's whole Pending backlog, every cycle
        if previous is not None and kj:
            return previous.tasks[: self.kt] + _joined(map(_tasks_of, self.jobs[kj:]))
        return _joined(map(_tasks_of, self.jobs))

    def task_job(self) -> npt.NDArray[np.int32]:
        if self.prefix_only:
            assert self.previous is not None
            past = np.repeat(np.arange(self.kj, len(self.jobs), dtype=np.int32), self.past_lengths)
            return np.concatenate([self.previous.task_job[: self.kt], past])
        return np.repeat(np.arange(len(self.jobs), dtype=np.int32), self.lengths)

    def job_tasks(self) -> tuple[range, ...]:
        """Each job's tasks: the shared prefix's ranges as they were, the others from the starts."""
        kj = self.kj if self.previous is not None else 0
        starts = self.past_starts.tolist()
        past = tuple(map(range, starts[:-1], starts[1:]))
        return self.previous.job_tasks[:kj] + past if self.previous is not None and kj else past

    def by_job(self, previous: npt.NDArray[Any], fresh: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """[J] from the previous job column (kept jobs) and the fresh jobs' values, in job order."""
        if self.prefix_only:
            return np.concatenate([previous[: self.kj], fresh])
        kept = self.source >= 0
        out = np.empty(len(self.jobs), dtype=previous.dtype)
        out[kept] = previous[self.source[kept]]
        out[~kept] = fresh
        return out

    def by_task(self, previous: npt.NDArray[Any], fresh: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """[..., T] from the previous task column (kept tasks) and the fresh tasks', in task order.

        Kept jobs' tasks come in long stretches that were contiguous in the previous columns too (only
        the jobs that changed break them), so the column is those slices and the fresh ones joined:
        a copy of T entries rather than a gather through an index of T (on alibaba-2017's ~700,000
        tasks, 8 ms against 52 ms for a [4, T] request column). A column cut into many short stretches
        is gathered as before."""
        if self.prefix_only:
            return np.concatenate([previous[..., : self.kt], fresh], axis=-1)
        stretches = self._stretches()
        if stretches is not None:
            pieces = [
                (previous if kept else fresh)[..., start : start + length]
                for kept, start, length in stretches
            ]
            if pieces:
                return np.concatenate(pieces, axis=-1)
        kept = self.kept_task
        out = np.empty((*previous.shape[:-1], kept.size), dtype=previous.dtype)
        out[..., kept] = previous[..., self.task_source[kept]]
        out[..., ~kept] = fresh
        return out

    def _stretches(self) -> list[tuple[bool, int, int]] | None:
        """The task order as stretches (kept: from the previous columns, else from the fresh ones; where
        it starts there; how long), or None when there are more than ``MAX_STRETCHES``."""
        if self._stretch_list is not False:
            return self._stretch_list
        kept, source = self.kept_task, self.task_source
        found: list[tuple[bool, int, int]] | None = []
        if kept.size:
            starts_here = np.ones(kept.size, dtype=np.bool_)
            starts_here[1:] = (kept[1:] != kept[:-1]) | (kept[1:] & (source[1:] != source[:-1] + 1))
            starts = np.flatnonzero(starts_here)
            if starts.size > MAX_STRETCHES:
                found = None
            else:
                lengths = np.diff(np.append(starts, kept.size))
                fresh_before: IntArray = np.cumsum(~kept) - ~kept  # fresh tasks before each position
                from_previous = kept[starts]
                where = np.where(from_previous, source[starts], fresh_before[starts])
                found = list(zip(from_previous.tolist(), where.tolist(), lengths.tolist(), strict=True))
        self._stretch_list = found
        return found

    def marked(self, previous_marked: IntArray | None, fresh: list[int]) -> IntArray:
        """A set of marked tasks (``extended``, ``replacements``), ascending: the kept ones the previous
        columns list (``previous_marked``), moved to their current index, and the fresh ones (``fresh``:
        their positions among the fresh tasks)."""
        fresh_positions = np.array(fresh, dtype=np.int64)
        if self.prefix_only:
            assert previous_marked is not None
            kept_marked = previous_marked[previous_marked < self.kt]
            return np.concatenate([kept_marked, fresh_positions + self.kt]).astype(np.int64)
        fresh_index = np.flatnonzero(~self.kept_task)[fresh_positions]
        if previous_marked is None or not previous_marked.size or not self.kept_task.any():
            return fresh_index.astype(np.int64)
        assert self.previous is not None
        current = np.full(self.previous.request.shape[1], -1, dtype=np.int64)
        kept = np.flatnonzero(self.kept_task)
        current[self.task_source[kept]] = kept
        moved = current[previous_marked]
        return np.sort(np.concatenate([moved[moved >= 0], fresh_index])).astype(np.int64)

    def dropped_jobs(self) -> IntArray:
        """The previous jobs not kept."""
        assert self.previous is not None
        if self.prefix_only:
            return np.arange(self.kj, len(self.previous.jobs))
        keep = np.zeros(len(self.previous.jobs), dtype=np.bool_)
        keep[self.kept_jobs] = True
        return np.flatnonzero(~keep)

    def dropped_tasks(self) -> IntArray:
        """The previous tasks not kept."""
        assert self.previous is not None
        if self.prefix_only:
            return np.arange(self.kt, self.previous.request.shape[1])
        keep = np.zeros(self.previous.request.shape[1], dtype=np.bool_)
        keep[self.task_source[self.kept_task]] = True
        return np.flatnonzero(~keep)


class _QueueCodes:
    """The queue names of the current jobs (sorted) and codes: for the new jobs (``suffix``), and the
    previous cycle's codes moved to the current ones (``remap``, -1 for a queue no job names now)."""

    def __init__(self, previous: TaskColumns | None, kept: IntArray, suffix_jobs: tuple[Job, ...]) -> None:
        """``kept``: the previous jobs taken over; ``suffix_jobs``: the fresh ones."""
        named = {job.queue for job in suffix_jobs}
        if previous is not None:
            used = np.bincount(previous.job_queue_code[kept], minlength=len(previous.queue_names))
            named.update(previous.queue_names[c] for c in np.flatnonzero(used).tolist())
        self.names = tuple(sorted(named))
        code = {name: c for c, name in enumerate(self.names)}
        self.suffix = np.array([code[job.queue] for job in suffix_jobs], dtype=np.int32)
        old = previous.queue_names if previous is not None else ()
        self.remap = np.array([code.get(name, -1) for name in old], dtype=np.int32)


def _dropped_sums(previous: TaskColumns, dropped: IntArray) -> InputSums:
    """The sums of the previous cycle's tasks that are not kept."""
    job = previous.task_job[dropped]
    return input_sums(
        previous.request[:, dropped], previous.request_nz[:, dropped], previous.node[dropped],
        previous.releasing[dropped], previous.job_queue_code[job], previous.job_preemptible[job],
        len(previous.node_names), len(previous.queue_names),
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
