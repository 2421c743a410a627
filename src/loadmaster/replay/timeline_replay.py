"""A timeline file as a replay's trace: the timeline harness (``loadmaster simulate``'s control plane on a
virtual clock) run once per config, recorded into the same ``ReplayResult`` as a trace replay.

What a config changes: the scheduler's settings (profile, actions, ...; the timeline's own staleness
grace period is kept), the node-loss policy and the failed-search backoff when the config gives them,
and ``nodes: N`` keeps the first N of the timeline's ``nodes:``. A timeline's queues are its Queue
resources, so a config's ``queues:`` is refused, as is ``--window`` (a timeline runs to its last step, as
``simulate`` runs it).

What is recorded (a listener on the leader's object cache, moved to each new leader after a failover):

* a *job* of the summary is a replica, by name (a make-before-break replacement keeps its replica's
  name and is not a job of its own): it arrives when its object first appears and is placed when it
  first has a node; its wait is the difference;
* a sample at every virtual instant a replica changed, and one at the last step: GPU and CPU held by
  replicas that have a node and are not finished, replicas Pending, each queue's GPUs (cores when no
  node has a GPU), and the fragmented GPUs the server's ``loadmaster_cluster_gpu_fragmented`` gauge
  last showed;
* capacity: the allocatable of every node that registered during the run;
* evictions, moves and cycles from the leaders' ``/metrics`` counters, summed over leaders;
  ``scheduler_cpu_s`` is the cycles' measured duration (decide and write; the server measures no CPU).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadmaster.core.model import DEFAULT_QUEUE
from loadmaster.core.resources import CPU, GPU, parse_resources
from loadmaster.manifests import NODE, REPLICA
from loadmaster.manifests.model.node_model import allocatable_of
from loadmaster.manifests.model.task_model import is_schedulable, request_of
from loadmaster.replay.run_config import RunConfig
from loadmaster.replay.simulation import JobRecord, Progress, ReplayResult, Sample
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.scenario.schema import load_document
from loadmaster.timeline.harness import Harness
from loadmaster.timeline.schema import Timeline, build_timeline
from loadmaster.timeline.virtual_loop import VirtualTimeLoop


@dataclass(frozen=True, slots=True)
class TimelineTrace:
    """A timeline file given as ``loadmaster replay``'s TRACE."""

    name: str
    timeline: Timeline

    @property
    def end_s(self) -> float:
        return max((step.at_s for step in self.timeline.steps), default=0.0)


def read_timeline_file(path: Path) -> TimelineTrace:
    return TimelineTrace(str(path), build_timeline(load_document(path)))


def timeline_for(trace: TimelineTrace, config: RunConfig) -> Timeline:
    """The timeline as ``config`` changes it (module doc)."""
    if config.queues:
        raise ValueError(
            f"{config.name}: a timeline's queues are its Queue resources; this config's queues: would "
            "not apply"
        )
    timeline = trace.timeline
    if config.node_loss_policy is not None:
        settings = dataclasses.replace(timeline.config, node_loss_policy=config.node_loss_policy)
        timeline = dataclasses.replace(timeline, config=settings)
    if config.search_backoff.enabled:
        settings = dataclasses.replace(timeline.config, search_backoff=config.search_backoff)
        timeline = dataclasses.replace(timeline, config=settings)
    if config.node_count is not None:
        timeline = dataclasses.replace(timeline, nodes=timeline.nodes[: config.node_count])
    return timeline


def replay_timeline(
    trace: TimelineTrace, config: RunConfig, progress: Progress | None = None
) -> ReplayResult:
    timeline = timeline_for(trace, config)
    registrations = [node.body for node in timeline.nodes]
    registrations += [step.argument.body for step in timeline.steps if step.action == "add_node"]
    gpu_cluster = any(parse_resources(body.get("capacity")).get(GPU, 0) for body in registrations)
    recorder = _Recorder(config, gpu_cluster, progress)
    harness = Harness(
        timeline,
        scheduler=config.scheduler,
        max_moves_per_cycle=config.max_moves_per_cycle,
        on_leader=recorder.follow,
    )
    started = time.perf_counter()
    loop = VirtualTimeLoop()
    try:
        loop.run_until_complete(harness.run())
        recorder.sample(loop.time())  # the state holds to the last step: the time-weighted means end there
    finally:
        loop.close()
    return recorder.result(time.perf_counter() - started)


class _Recorder:
    def __init__(self, config: RunConfig, gpu_cluster: bool, progress: Progress | None) -> None:
        self._config = config
        self._gpu_cluster = gpu_cluster  # queue shares in GPUs, else in cores (as a trace replay's)
        self._progress = progress
        self._leaders: list[ControlPlane] = []
        self._records: dict[str, JobRecord] = {}
        self._placed = 0  # records placed so far (the progress bar's count)
        self._replicas: dict[str, dict[str, Any]] = {}  # object name -> its latest object
        self._capacity: dict[str, dict[str, int]] = {}  # node -> allocatable (kept once it registered)
        self._used = {GPU: 0, CPU: 0}
        self._queue_use: dict[str, int] = {}
        self._pending = 0
        self._samples: list[Sample] = []

    def follow(self, plane: ControlPlane) -> None:
        """Record from ``plane``'s cache from now on, starting from what it holds."""
        self._leaders.append(plane)
        for kind in (NODE, REPLICA):
            for cached in plane.cache.objects[kind].values():
                self._changed(kind, cached.name, None, cached)
        plane.cache.add_listener(self._changed)

    def _changed(self, kind: str, name: str, before: Cached | None, after: Cached | None) -> None:
        if kind == NODE and after is not None:
            spec, status = after.obj.get("spec", {}), after.obj.get("status", {})
            self._capacity[name] = allocatable_of(spec, status)
        if kind != REPLICA:
            return
        now = asyncio.get_running_loop().time()
        previous = self._replicas.pop(name, None)
        if previous is not None:
            self._count(previous, -1)
        if after is not None:
            self._replicas[name] = after.obj
            self._count(after.obj, +1)
            self._note(name, after.obj, now)
        self.sample(now)

    def _count(self, replica: dict[str, Any], sign: int) -> None:
        spec, status = replica.get("spec", {}), replica.get("status", {})
        if not is_schedulable(replica):
            return
        if status.get("node_ref") is None or status.get("phase", "Pending") == "Pending":
            self._pending += sign
            return
        request = request_of(spec)
        for resource in (GPU, CPU):
            self._used[resource] += sign * request.get(resource, 0)
        queue = str(spec.get("queue", DEFAULT_QUEUE))
        share = request.get(GPU, 0) if self._gpu_cluster else request.get(CPU, 0)
        self._queue_use[queue] = self._queue_use.get(queue, 0) + sign * share

    def _note(self, name: str, replica: dict[str, Any], now: float) -> None:
        spec, status = replica.get("spec", {}), replica.get("status", {})
        if spec.get("replaces"):
            return  # a replacement: its replica is the job (module doc)
        record = self._records.get(name)
        if record is None:
            record = self._records[name] = JobRecord(name, str(spec.get("queue", DEFAULT_QUEUE)), now)
        if record.placed_s is None and status.get("node_ref") and status.get("phase") != "Pending":
            record.placed_s = now
            self._placed += 1

    def sample(self, now: float) -> None:
        fragmented = self._leaders[-1].metrics.registry.get_sample_value("loadmaster_cluster_gpu_fragmented")
        unit = 1000.0  # GPU thousandths or CPU millicores -> GPUs or cores
        sample = Sample(
            now,
            self._used[GPU],
            self._used[CPU],
            self._pending,
            float(fragmented or 0.0),
            {queue: use / unit for queue, use in sorted(self._queue_use.items())},
        )
        if self._samples and self._samples[-1].at_s == now:
            self._samples[-1] = sample  # one sample per instant: the state it ends in
        else:
            self._samples.append(sample)
        if self._progress is not None:
            self._progress(now, self._placed)

    def result(self, wall_s: float) -> ReplayResult:
        capacity = {r: sum(a.get(r, 0) for a in self._capacity.values()) for r in (GPU, CPU)}
        result = ReplayResult(self._config, capacity, list(self._records.values()), self._samples)
        for plane in self._leaders:
            registry = plane.metrics.registry
            decisions = "loadmaster_decisions_total"
            result.evictions += int(registry.get_sample_value(decisions, {"action": "evict"}) or 0)
            result.moves += int(registry.get_sample_value(decisions, {"action": "move"}) or 0)
            result.cycles += int(registry.get_sample_value("loadmaster_cycles_total") or 0)
            cycle_s = registry.get_sample_value("loadmaster_decision_duration_seconds_sum")
            result.scheduler_cpu_s += cycle_s or 0.0
        result.wall_s = wall_s
        return result
