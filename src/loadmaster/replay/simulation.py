"""The replay loop: a trace's jobs through the scheduler's own cycles, on a virtual clock.

Events are arrivals (a job's tasks become Pending) and departures (a task that has run its recorded
runtime leaves). Arrivals are read from the trace in order, each job made when its instant comes
(``trace.Arrivals``), and a job is let go once its tasks have left: only its ``JobRecord`` (its wait)
stays, so memory follows the jobs in the cluster, not the trace. Time jumps from one event instant to
the next; at each instant every event due then is applied (arrivals first), and then, while any task
is Pending, the scheduler runs: ``run_cycle`` over the cluster as it stands (the same function the
server's scheduler runs), whose decisions take effect at once:

* ``bind``: the task starts on its node and will leave ``runtime`` seconds later;
* ``evict``: the task stops and is Pending again; when placed again it runs its whole runtime anew;
* ``move``: the task runs on its new node from now on (its departure time is unchanged);
* ``pipeline``: nothing yet; the task waits for the evictions made for it, so the cycle runs again at the
  same instant (at most ``MAX_CYCLES_PER_INSTANT`` times) and binds it on the room they freed.

Consolidation keeps the control plane's move ledger (``core/voluntary_moves.py``, seed conflict 5), as
the server's does: a task started or moved in the last 10 minutes is not moved, nor is any task moved
onto a node that received a move in the last 2 minutes (``runtime/plane/move_ledger.MoveLedger``, one per
run). A trace has no pressure samples and no heartbeats: the pressure cap and late nodes never apply.
A run with a ``search_backoff`` keeps the control plane's ledger of failed searches across its cycles
(``core/search_backoff.py``), as the server does.

The server also runs a cycle on its safety tick, so a job whose placement waits only for a timer (a
search's rest, a node's move cooldown) is tried again when it ends. A replay has no tick: it wakes at
those ends instead (``_wake_at``), when some task is Pending then and the trace has events left, so a
sparse trace does not wait for its next event to see them. A task's own move cooldown ends 10 minutes
after every start: waking for each cost NASA x1.5 with backfill 44,831 cycles against 32,535 (377 s of
scheduler CPU against 286 s, with no move either way) for the rare consolidation it enables, so the
next event sees it.

A job is placed when ``min_available`` of its tasks first run together; its wait is from its arrival to
then. The state is sampled after each instant (``Sample``), so a figure's time-weighted mean is exact for
the step function the samples describe. GPU fragmentation costs a pass over every GPU node (as much as a
cycle): it is measured once every ``FRAGMENTATION_EVERY_S`` of virtual time (from the cycle's snapshot
when one ran then; a run may ask for another period) and held in between.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from loadmaster.core.columns.snapshot import ClusterSnapshot, SnapshotCache
from loadmaster.core.model import DEFAULT_QUEUE, Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.resources import CPU, GPU
from loadmaster.core.search_backoff import SearchBackoffLedger
from loadmaster.core.voluntary_moves import NODE_COOLDOWN_S
from loadmaster.cycle import run_cycle
from loadmaster.placement.gpu_fragmentation_report import cluster_fragmented_gpus
from loadmaster.replay.run_config import RunConfig
from loadmaster.replay.trace import Trace, TraceJob
from loadmaster.runtime.plane.move_ledger import MoveLedger

MAX_CYCLES_PER_INSTANT = 4
FRAGMENTATION_EVERY_S = 3600.0
Progress = Callable[[float, int], None]  # (virtual seconds, jobs placed so far)


@dataclass(slots=True)
class _TaskRun:
    job: str
    base: Task  # as the trace gave it (Pending)
    runtime_s: float | None
    node: str | None = None
    devices: tuple[int, ...] = ()  # its GPU devices since its bind or move: kept, as the server keeps them
    generation: int = 0  # moves on at every start and stop: a departure of an older run is stale
    bound_at_s: float | None = None  # its latest start or move (the move ledger's replica cooldown)


@dataclass(slots=True)
class JobRecord:
    name: str
    queue: str
    arrival_s: float
    placed_s: float | None = None  # when min_available of its tasks first ran together


@dataclass(frozen=True, slots=True)
class Sample:
    at_s: float
    gpu_used: int  # GPU thousandths allocated (core.resources.GPU_DEVICE per device)
    cpu_used: int
    pending_jobs: int
    fragmented_gpu: float  # GPUs (gpu_fragmentation_report)
    queue_use: dict[str, float]  # per queue: GPUs allocated (CPU cores when the cluster has no GPU)


@dataclass(slots=True)
class ReplayResult:
    config: RunConfig
    capacity: dict[str, int]
    jobs: list[JobRecord]
    samples: list[Sample] = field(default_factory=list)
    evictions: int = 0
    moves: int = 0
    cycles: int = 0
    scheduler_cpu_s: float = 0.0
    wall_s: float = 0.0


class Replay:
    def __init__(
        self,
        trace: Trace,
        config: RunConfig,
        until_s: float | None = None,
        fragmentation_every_s: float = FRAGMENTATION_EVERY_S,
    ) -> None:
        """``fragmentation_every_s``: how often GPU fragmentation is measured (virtual seconds; a
        compressed trace needs it finer than the hour that suits a trace at its own pace)."""
        nodes = trace.nodes[: config.node_count] if config.node_count else trace.nodes
        self._nodes: tuple[Node, ...] = nodes
        self._cycle_config = config.cycle_config  # consolidation's moves capped as the control plane does
        # the control plane's failed-search backoff, when the run sets one (core/search_backoff.py)
        self._backoff = SearchBackoffLedger(config.search_backoff) if config.search_backoff.enabled else None
        self._moves = MoveLedger()  # the control plane's node cooldowns (the replica's: ``bound_at_s``)
        self._wakes: list[float] = []  # timer ends (a heap): instants without an event of the trace
        self._wake_set: set[float] = set()
        self._queues = config.queues or trace.queues  # the config's queues, else the trace's own
        # A job of a queue this run does not have waits for good, as the server's QueueNotFound does.
        self._known_queues = {queue.name for queue in self._queues} | {DEFAULT_QUEUE}
        self._until_s = until_s
        self._cache = SnapshotCache()
        # Arrivals are read from the trace in order, each job made as it arrives (``trace.Arrivals``);
        # departures wait in a heap. At one instant arrivals come first, then departures as pushed.
        self._arrivals = trace.jobs.between(-math.inf, until_s)
        self._arrival_s: list[float] = self._arrivals.arrival_s.tolist()
        self._next_arrival = 0
        self._departures: list[tuple[float, int, str, int]] = []  # (time, seq, task, generation)
        self._seq = 0
        self._active: dict[str, Job] = {}  # jobs with a task not yet finished, in arrival order
        # each active job's tasks as the next cycle sees them, by name in the job's order: a start, stop
        # or departure changes one entry, and the job's task tuple is made from it in C (a job of 10,000
        # instances with one that changed cost 10,000 Python steps a cycle when rebuilt task by task)
        self._tasks: dict[str, dict[str, Task]] = {}
        self._runs: dict[str, _TaskRun] = {}
        self._running: dict[str, int] = {}  # job -> tasks running
        self._pending: dict[str, int] = {}  # job -> tasks Pending
        self._changed: set[str] = set()  # jobs whose Job must be rebuilt before the next cycle
        self._used = {GPU: 0, CPU: 0}
        self._queue_use: dict[str, int] = {}
        self._gpu_cluster = any(node.allocatable.get(GPU, 0) for node in nodes)
        self._fragmented = 0.0
        self._fragmentation_at = -float("inf")
        self._fragmentation_every_s = fragmentation_every_s
        capacity = {r: sum(node.allocatable.get(r, 0) for node in nodes) for r in (GPU, CPU)}
        self._records: dict[str, JobRecord] = {}
        self._placed = 0  # jobs placed so far (the progress bar's count, kept rather than recounted)
        self.tasks_placed = 0  # tasks that have run at least once (a restart after an eviction is not new)
        self.result = ReplayResult(config, capacity, [])

    # -- the loop ---------------------------------------------------------------------------------

    def run(self, progress: Progress | None = None) -> ReplayResult:
        started = time.perf_counter()
        while (now := self._next_instant()) is not None:
            if self._until_s is not None and now >= self._until_s:
                break
            while self._next_arrival < len(self._arrival_s) and self._arrival_s[self._next_arrival] == now:
                self._arrive(self._arrivals[self._next_arrival], now)
                self._next_arrival += 1
            departed: dict[str, set[str]] = {}  # job -> its tasks that leave now
            while self._wakes and self._wakes[0] <= now:
                self._wake_set.discard(heapq.heappop(self._wakes))
            while self._departures and self._departures[0][0] == now:
                _, _, name, generation = heapq.heappop(self._departures)
                self._depart(name, generation, departed)
            self._drop_departed(departed)
            if self._pending:
                self._schedule(now)
            elif now - self._fragmentation_at >= self._fragmentation_every_s:
                self._measure_fragmentation(ClusterSnapshot(self._cluster(), self._cache), now)
            self._sample(now)
            if progress is not None:
                progress(now, self._placed)
        self.result.jobs = list(self._records.values())
        self.result.wall_s = time.perf_counter() - started
        return self.result

    def _next_instant(self) -> float | None:
        """The earliest of the next arrival, the next departure and, while a task is Pending, the next
        timer's end (None: nothing is left to arrive or leave). Timers alone do not keep a run going: a
        job that never fits would otherwise wake it at every rest's end for ever."""
        instants = []
        if self._departures:
            instants.append(self._departures[0][0])
        if self._next_arrival < len(self._arrival_s):
            instants.append(self._arrival_s[self._next_arrival])
        if not instants:
            return None
        if self._wakes and self._pending:
            instants.append(self._wakes[0])
        return min(instants)

    def _wake_at(self, at_s: float) -> None:
        if at_s not in self._wake_set:
            self._wake_set.add(at_s)
            heapq.heappush(self._wakes, at_s)

    def _push_departure(self, at_s: float, task: str, generation: int) -> None:
        heapq.heappush(self._departures, (at_s, self._seq, task, generation))
        self._seq += 1

    # -- events -----------------------------------------------------------------------------------

    def _arrive(self, trace_job: TraceJob, now: float) -> None:
        job = trace_job.job
        self._records[job.name] = JobRecord(job.name, job.queue, now)
        if job.queue not in self._known_queues:
            return  # never placed (counted as such)
        self._active[job.name] = job
        self._tasks[job.name] = {task.name: task for task in job.tasks}
        self._pending[job.name] = len(job.tasks)
        self._running[job.name] = 0
        for task in job.tasks:
            self._runs[task.name] = _TaskRun(job.name, task, trace_job.runtime_s)

    def _depart(self, task_name: str, generation: int, departed: dict[str, set[str]]) -> None:
        run = self._runs.get(task_name)
        if run is None or run.generation != generation:
            return  # evicted (and maybe started again) since this departure was set
        self._stop(run)
        del self._runs[task_name]
        departed.setdefault(run.job, set()).add(task_name)

    def _drop_departed(self, departed: dict[str, set[str]]) -> None:
        """Each job's tasks that left at this instant leave its task list (one step per task that left;
        the job's tuple is made anew before the next cycle, ``_cluster``)."""
        for name, gone in departed.items():
            tasks = self._tasks[name]
            for task in gone:
                del tasks[task]
            if not tasks:
                del self._active[name], self._tasks[name], self._pending[name], self._running[name]
                self._changed.discard(name)
                continue
            job = self._active[name]
            if job.min_available > len(tasks):
                self._active[name] = dataclasses.replace(job, min_available=len(tasks))
            self._changed.add(name)

    # -- cycles -----------------------------------------------------------------------------------

    def _cluster(self) -> Cluster:
        for name in self._changed:
            self._active[name] = dataclasses.replace(
                self._active[name], tasks=tuple(self._tasks[name].values())
            )
        self._changed.clear()
        return Cluster(self._nodes, tuple(self._active.values()), self._queues, self._cycle_config)

    def _changed_task(self, run: _TaskRun) -> None:
        """The run's task as the next cycle sees it: Pending as the trace gave it, or Running where it
        runs (on its devices)."""
        task = run.base
        if run.node is not None:
            task = dataclasses.replace(
                task, status=TaskStatus.RUNNING, node=run.node, devices=run.devices, bound_at_s=run.bound_at_s
            )
        self._tasks[run.job][task.name] = task
        self._changed.add(run.job)

    def _schedule(self, now: float) -> None:
        for _ in range(MAX_CYCLES_PER_INSTANT):
            cluster = self._cluster()
            cpu_started = time.process_time()
            config = dataclasses.replace(cluster.config, voluntary_moves=self._moves.view(now))
            cluster = dataclasses.replace(cluster, config=config)
            if self._backoff is not None:
                cluster = self._backoff.cluster_at(cluster, now)
            plan = run_cycle(cluster, now, self._cache)
            if self._backoff is not None:
                self._backoff.record(now, plan.searches)
            self.result.scheduler_cpu_s += time.process_time() - cpu_started
            self.result.cycles += 1
            waiting = False
            for decision in plan.decisions:
                run = self._runs[decision.task]
                if self._gpu_cluster and decision.kind in ("bind", "move"):  # no GPU node: no devices
                    run.devices = plan.tasks[decision.task].devices
                if decision.kind == "bind":
                    self._start(run, decision.node, now)
                elif decision.kind == "evict":
                    self._stop(run)
                    self.result.evictions += 1
                elif decision.kind == "move":
                    self._move(run, decision.node, now)
                    self._moves.record(decision.node, now)
                    self._wake_at(now + NODE_COOLDOWN_S)
                    self.result.moves += 1
                else:  # pipeline: bound once the evictions made for it have freed the room
                    waiting = True
            if self._backoff is not None and (rest_end := self._backoff.next_rest_end(now)) is not None:
                self._wake_at(rest_end)
            if plan.snapshot is not None and now - self._fragmentation_at >= self._fragmentation_every_s:
                self._measure_fragmentation(plan.snapshot, now)
            if not waiting or not self._pending:
                return

    def _measure_fragmentation(self, snapshot: ClusterSnapshot, now: float) -> None:
        self._fragmented = cluster_fragmented_gpus(snapshot)
        self._fragmentation_at = now

    # -- a task's state ---------------------------------------------------------------------------

    def _start(self, run: _TaskRun, node: str, now: float) -> None:
        run.node, run.bound_at_s = node, now
        run.generation += 1
        if run.generation == 1:  # its first start: generations move on at every start and stop
            self.tasks_placed += 1
        self._charge(run, +1)
        self._pending[run.job] -= 1
        self._running[run.job] += 1
        self._changed_task(run)
        if self._pending[run.job] == 0:
            del self._pending[run.job]
        record = self._records[run.job]
        if record.placed_s is None and self._running[run.job] >= self._active[run.job].min_available:
            record.placed_s = now
            self._placed += 1
        if run.runtime_s is not None:
            self._push_departure(now + run.runtime_s, run.base.name, run.generation)

    def _stop(self, run: _TaskRun) -> None:
        """The task stops running (evicted, or done: the caller then drops it)."""
        if run.node is None:
            return
        self._charge(run, -1)
        run.node = None
        run.devices = ()
        run.generation += 1
        self._running[run.job] -= 1
        self._pending[run.job] = self._pending.get(run.job, 0) + 1
        self._changed_task(run)

    def _move(self, run: _TaskRun, node: str, now: float) -> None:
        run.node, run.bound_at_s = node, now
        self._changed_task(run)

    def _charge(self, run: _TaskRun, sign: int) -> None:
        request = run.base.request
        for resource in (GPU, CPU):
            self._used[resource] += sign * request.get(resource, 0)
        share = request.get(GPU, 0) if self._gpu_cluster else request.get(CPU, 0)
        queue = self._records[run.job].queue
        self._queue_use[queue] = self._queue_use.get(queue, 0) + sign * share

    def _sample(self, now: float) -> None:
        unit = 1000.0  # GPU thousandths or CPU millicores -> GPUs or cores
        self.result.samples.append(
            Sample(
                now,
                self._used[GPU],
                self._used[CPU],
                len(self._pending),
                self._fragmented,
                {queue: use / unit for queue, use in sorted(self._queue_use.items())},
            )
        )
