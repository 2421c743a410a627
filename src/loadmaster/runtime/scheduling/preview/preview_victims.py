"""What a preview's cycle does to running replicas: its evictions (victims) and voluntary moves, as the
real cycle would write them (``cycle_writes.py``: evicted or moved replicas go Terminating with the
decision's reason, audited with the victim's queue).

Each entry: ``{replica, kind: evict | move, action, from, to?, queue, why}``; ``from`` is the node the
replica runs on now, ``to`` a move's destination, ``queue`` the victim's own queue (the one reclaim
takes from) and ``why`` the decision's reason (who it makes room for and by which rule).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from loadmaster.core.model import Cluster
from loadmaster.core.working.decisions import Decision

DISRUPTIONS = ("evict", "move")


def queues_by_task(cluster: Cluster) -> dict[str, str]:
    return {task.name: job.queue for job in cluster.jobs for task in job.tasks}


def disruption_entry(decision: Decision, queues: dict[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "replica": decision.task,
        "kind": decision.kind,
        "action": decision.action,
        "from": decision.from_node or decision.node,
    }
    if decision.kind == "move":
        entry["to"] = decision.node
    entry["queue"] = queues.get(decision.task, "default")
    entry["why"] = decision.reason or decision.action
    return entry


def disruptions(decisions: Iterable[Decision], queues: dict[str, str]) -> list[dict[str, Any]]:
    """Every eviction and move of the cycle, in the cycle's order."""
    return [disruption_entry(d, queues) for d in decisions if d.kind in DISRUPTIONS]


def making_room_on(entries: Sequence[dict[str, Any]], node: str | None) -> list[dict[str, Any]]:
    """The evictions and moves off ``node``: what a replica placed there depends on."""
    return [] if node is None else [entry for entry in entries if entry["from"] == node]
