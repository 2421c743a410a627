"""``/api/admin/stats`` and the stats part of ``/api/info``: counts from the cache and the loops' figures."""

from __future__ import annotations

from typing import Any

from loadmaster.manifests import KINDS, plural_of
from loadmaster.runtime.control_plane import ControlPlane


def stats(plane: ControlPlane) -> dict[str, Any]:
    cache = plane.cache
    objects = {plural_of(kind): len(cache.objects[kind]) for kind in KINDS}
    phases = plane.status_counts.replica_phases  # kept per change: no walk over every replica here
    node_states = plane.status_counts.node_states
    scheduler = plane.scheduler
    model = plane.model
    figures: dict[str, Any] = {
        "objects": objects,
        "replicas_by_phase": dict(sorted(phases.items())),
        "nodes_by_state": dict(sorted(node_states.items())),
        "pending_replicas": len(model.pending) if model is not None else 0,
        "revision": cache.revision,
    }
    s = plane.scheduler_stats
    figures.update(
        cycles=s.cycles,
        last_cycle_duration_s=round(s.last_cycle_s, 6),
        last_cycle_at=s.last_cycle_at,
        backoffs=s.backoffs,
        resting_searches=dict(s.resting_searches),
        last_error=s.last_error,
        scheduler_running=scheduler is not None,
    )
    return figures


async def leader_status(plane: ControlPlane) -> dict[str, Any]:
    return {
        "leader": await plane.elector.leader_id(),
        "is_leader": plane.is_leader,
        "self": plane.identity,
        "since": plane.leadership.since if plane.is_leader else None,
        "fence_revision": plane.leadership.fence_revision if plane.is_leader else None,
    }
