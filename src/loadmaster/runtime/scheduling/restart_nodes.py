"""AVA's stickiness for restarts (C9): a restarted replica keeps its node while that node passes its
filters.

Before a failing replica is restarted in place, its node is checked against the replica's filters by
the real placement engine, with the replica's own resources given back (as if it were placed again)
and the other replicas there holding theirs: the probe of a backoff's room check (room_events.py), on
one node. A node that still passes keeps the replica (the restart is in place); one that no longer does
(cordoned, tainted, relabelled, shrunk, its volume pool gone, ...) sends it back to Pending with the node
as its previous node, for the scheduler to place elsewhere. A replica with a replacement in flight
(``X.next``) is left to it. Cost: the replicas on the restarting replica's node, once per restart.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime

from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.manifests.replicas import replacement_name
from loadmaster.placement.diagnosis import explain
from loadmaster.runtime.scheduling.model.scheduling_model import SchedulingModel
from loadmaster.session import Session

NO_LONGER_PASSES = "it no longer passes the replica's filters"


def nodes_turning_away(model: SchedulingModel, names: Iterable[str], now: datetime) -> dict[str, str]:
    """Replica name -> why its node turns it away now, for each named placed replica whose node fails its
    filters. A replica on a node the scheduler does not know is left out (the garbage collector's)."""
    refused: dict[str, str] = {}
    for name in sorted(names):
        replica = model.replicas.get(name)
        if replica is None or replica.node_ref is None or replacement_name(name) in model.replicas:
            continue
        nodes, holding = model.room_on([replica.node_ref], now)
        if not nodes:
            continue
        others = [task for task in holding if task.name != name]
        why = node_refusal(nodes[0], others, replica.as_task(), model.config, now.timestamp())
        if why is not None:
            refused[name] = why
    return refused


def node_refusal(
    node: Node, holding: Sequence[Task], task: Task, config: SchedulerConfig, now_s: float
) -> str | None:
    """Why ``node`` turns ``task`` away as a new placement, given the ``holding`` tasks there; None when
    it passes every filter. The task keeps its job, so its siblings there count (spread, locality)."""
    probe = dataclasses.replace(task, status=TaskStatus.PENDING, node=None, previous_node=None)
    by_job: dict[str, list[Task]] = defaultdict(list)
    for member in (*holding, probe):
        by_job[member.job].append(member)
    jobs = tuple(Job(name, tuple(tasks)) for name, tasks in sorted(by_job.items()))
    session = Session.open(Cluster((node,), jobs, (), config), now_s)
    engine, t = session.engine, session.snapshot.task_of(task.name)
    if engine.feasible(engine.context(t)).any():
        return None
    return explain(engine, t).nodes.get(node.name) or NO_LONGER_PASSES
