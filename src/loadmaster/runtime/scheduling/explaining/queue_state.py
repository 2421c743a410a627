"""``GET /api/queue-state``: each queue's live fairness, computed now from the cluster as it is.

The same figures ``simulate`` reports (``queues/report.py``): what the queue deserves, what fair share
that turned into given everyone's demand, what it holds, its limit, and its dominant share
(``max_r allocated[r] / allocatable[r]``, ``allocatable = min(limit, max(deserved, fair_share))``:
above 1 it is over its share in some resource, and its jobs can be reclaimed). They are what the next
cycle starts from: the cluster the scheduler would build now, before any action runs. Every server
answers (the model is kept on followers too). Each queue also names its siblings (the queues it shares
its parent's quota with) and its last reclaim (the newest ``evict`` audit entry by ``reclaim`` of one of
its replicas, and why), so a person can see why a team was or was not reclaimed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from loadmaster.core.model import Cluster
from loadmaster.queues.report import queues_report
from loadmaster.runtime.scheduling.model.scheduling_model import SchedulingModel
from loadmaster.session import Session
from loadmaster.wire import QueueFigures, QueueState

RECLAIM = "reclaim"


def _report(cluster: Cluster, now_s: float) -> dict[str, dict[str, Any]]:
    """Pure (runs in a worker thread): the cluster was built on the event loop."""
    queues = Session.open(cluster, now_s).queues
    return queues_report(queues.tree, queues.fair_share, queues.usage, queues.demand)


def last_reclaims(evictions: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per victim queue, its newest eviction by reclaim: ``{at, replica, node, message}``."""
    newest: dict[str, dict[str, Any]] = {}
    for entry in evictions:  # oldest first: a later one replaces an earlier one
        details = entry.get("details") or {}
        if details.get("action") != RECLAIM or not details.get("queue"):
            continue
        newest[str(details["queue"])] = {
            "at": entry.get("time"),
            "replica": str(entry.get("object", "")).removeprefix("replicas/"),
            "node": details.get("node"),
            "message": entry.get("message"),
        }
    return newest


async def queue_state(
    model: SchedulingModel, evictions: Sequence[Mapping[str, Any]], now: datetime
) -> QueueState:
    build = await model.build_off_loop(now)
    report = await asyncio.to_thread(_report, build.cluster, now.timestamp())
    reclaims = last_reclaims(evictions)
    for name, entry in report.items():
        entry["siblings"] = [
            other
            for other, sibling in report.items()
            if other != name and sibling["parent"] == entry["parent"]
        ]
        entry["last_reclaim"] = reclaims.get(name)
    queues = cast(dict[str, QueueFigures], report)  # the figures above, and every one of them filled
    return {"at": now.isoformat(), "queues": queues}
