"""Backoff meets the cluster: a replica waiting out its placement backoff is retried at once when the
cluster gains room that could fit it (kube-scheduler's "move to active on a cluster event"; issue 14).

Room appears on a node when it joins, comes back Ready, is uncordoned or changes shape, or when a
replica holding resources there lets them go (stopped, deleted, moved away). The scheduling model
records those node names (``RoomLog``). Before a cycle, the replicas in a backoff are checked against
those nodes alone, with the replicas that hold resources there, by the real placement engine's filters
(capacity, selectors, taints, ports, GPUs, ...): those feasible on one of them have their backoff waived
and are in the cycle. A check costs the nodes that gained room, the replicas on them and the replicas in
a backoff (identical ones share one equivalence class), never the whole cluster. A node alone is a
"could fit": a hard topology spread, a queue's quota or a rival placed first may still say no, and the
attempt then counts as one (its backoff starts again).

The admin trigger (``POST /api/admin/trigger-reconcile``) waives every backoff.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.placement.equivalence import class_key
from loadmaster.session import Session

_PROBE_JOB = "room-probe:"  # a probe is its own job: nothing else counts as its siblings


@dataclass(slots=True)
class RoomLog:
    """The nodes that gained room since the last check, by name."""

    nodes: set[str] = field(default_factory=set)

    def add(self, node: str) -> None:
        self.nodes.add(node)

    def take(self) -> set[str]:
        taken, self.nodes = self.nodes, set()
        return taken


def fitting_waiting_tasks(
    nodes: Sequence[Node], holding: Sequence[Task], waiting: Sequence[Task], config: SchedulerConfig
) -> set[str]:
    """The names of the ``waiting`` tasks feasible on at least one of ``nodes``, given the ``holding``
    tasks placed there. Identical waiting tasks (one equivalence class) are probed once. Pure: runs in a
    worker thread."""
    if not nodes or not waiting:
        return set()
    by_job: dict[str, list[Task]] = defaultdict(list)
    for task in holding:
        by_job[task.job].append(task)
    jobs = [Job(name, tuple(tasks)) for name, tasks in sorted(by_job.items())]
    classes: dict[Hashable, list[str]] = {}  # class -> the waiting tasks in it
    probes: list[Task] = []
    for task in waiting:
        probe = dataclasses.replace(task, status=TaskStatus.PENDING, node=None, previous_node=None)
        members = classes.setdefault(class_key(probe, None), [])
        if not members:
            name = f"{_PROBE_JOB}{len(probes)}"
            probes.append(dataclasses.replace(probe, name=name, job=name))
        members.append(task.name)
    jobs += [Job(probe.name, (probe,)) for probe in probes]
    session = Session.open(Cluster(tuple(sorted(nodes, key=lambda n: n.name)), tuple(jobs), (), config))
    engine, snapshot = session.engine, session.snapshot
    fitting: set[str] = set()
    for probe, members in zip(probes, classes.values(), strict=True):
        if engine.feasible(engine.context(snapshot.task_of(probe.name))).any():
            fitting.update(members)
    return fitting
