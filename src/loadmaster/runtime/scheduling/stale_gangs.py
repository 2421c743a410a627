"""Stale gangs in the server (KAI F5): since when each gang Job has been below ``min_available``, from
the stored times of its tasks, so ``stale_gang_eviction`` gets the job's ``stale_for``.

A task is *active* when it is Scheduled or Running on a Ready node (the timeline spec's "Stale gangs":
a task on a NotReady node is not active). A gang with at least one active task and fewer than
``min_available`` is stale since the moment it fell below: with ``deficit = min_available - active``
and each inactive task's inactive-since time (on a NotReady node: the node's NotReady instant, last
heartbeat + window; Pending after its node was lost or deleted: ``status.inactive_since``; never placed:
its creation; anything else: its Phase condition's transition), ``stale_since`` is the deficit-th most
recent of them: until then, enough of them were still active.

The node-loss policy acts first: a gang with a task on a NotReady node the policy has not acted on yet
is held (not stale) until it has, since the policy may move the task (NotReady + 30..35 s, or + 60 s
when only the agent is down: the same instant as the default grace). A gang whose lost task is placed
again is whole and not stale; one whose task stays (policy ``none``) is stale since the NotReady
instant, so it is evicted as soon as the policy has acted, if the grace has run out by then. Only Jobs
are gangs here (a ``hosts`` service is placed whole but never evicted as stale).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from datetime import datetime

from loadmaster.core.model import Job
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.phase_condition import phase_condition_of
from loadmaster.runtime.scheduling.model.model_entries import NodeEntry, ReplicaState

_ACTIVE_PHASES = frozenset({ReplicaPhase.SCHEDULED.value, ReplicaPhase.RUNNING.value})
_ENDED_PHASES = frozenset({ReplicaPhase.SUCCEEDED.value, ReplicaPhase.TERMINATED.value})


def gang_size(replica: ReplicaState) -> int:
    """The replica's gang's ``min_available`` (1: not a gang)."""
    size = replica.obj.get("spec", {}).get("min_available", 1)
    return size if isinstance(size, int) else 1


def _time(value: object) -> datetime | None:
    try:
        return parse_timestamp(value) if isinstance(value, str) and value else None
    except ValueError:
        return None


def _inactive_since(replica: ReplicaState, nodes: Mapping[str, NodeEntry]) -> datetime | None:
    status = replica.obj.get("status", {})
    entry = nodes.get(replica.node_ref or "")
    if replica.phase in _ACTIVE_PHASES and entry is not None and entry.heartbeat is not None:
        return entry.heartbeat + entry.window
    if replica.pending:
        created = replica.obj.get("metadata", {}).get("created_at")
        return _time(status.get("inactive_since")) or _time(created)
    condition = phase_condition_of(status)
    return _time(condition.get("last_transition_time")) if condition else None


def stale_since(
    members: Iterable[ReplicaState], min_available: int, nodes: Mapping[str, NodeEntry], now: datetime
) -> datetime | None:
    """When the gang fell below ``min_available`` (None: it is not stale)."""
    active = 0
    inactive: list[datetime] = []
    for replica in members:
        if replica.phase in _ENDED_PHASES:
            continue
        entry = nodes.get(replica.node_ref or "")
        ready = entry is not None and entry.at(now).state == "Ready"
        if replica.phase in _ACTIVE_PHASES and entry is not None and not ready and not entry.lost:
            return None  # the node-loss policy acts first: held until it has (it may move the task)
        if replica.phase in _ACTIVE_PHASES and ready:
            active += 1
        else:
            inactive.append(_inactive_since(replica, nodes) or now)
    deficit = min_available - active
    if active == 0 or deficit <= 0:
        return None
    inactive.sort(reverse=True)
    if len(inactive) >= deficit:
        return inactive[deficit - 1]
    # Some tasks have no record (being created again): the oldest stored loss, if any, is the best bound.
    return inactive[-1] if inactive else None


def stale_gangs(
    jobs: Mapping[str, Mapping[str, ReplicaState]],
    gang_keys: Iterable[str],
    nodes: Mapping[str, NodeEntry],
    now: datetime,
) -> dict[str, datetime]:
    """Every stale gang Job among ``gang_keys``, with the time it went stale."""
    stale: dict[str, datetime] = {}
    for key in gang_keys:
        members = jobs.get(key)
        if not members:
            continue
        size = max(gang_size(replica) for replica in members.values())
        since = stale_since(members.values(), size, nodes, now) if size > 1 else None
        if since is not None:
            stale[key] = since
    return stale


def with_stale_for(jobs: tuple[Job, ...], stale: Mapping[str, datetime], now: datetime) -> tuple[Job, ...]:
    """``jobs`` with each stale gang's ``stale_for_s`` (seconds since it went stale), others unchanged."""
    if not stale:
        return jobs
    return tuple(
        dataclasses.replace(job, stale_for_s=max(0.0, (now - stale[job.name]).total_seconds()))
        if job.name in stale
        else job
        for job in jobs
    )
