"""Backoff meets the cluster (issue 14): a replica in its placement backoff is retried at once when room
that could fit it appears, and only then (room_events.py); the admin trigger retries every one. A
retry only a waiver made that fails as the record says writes nothing (cycle_writes.py)."""

from __future__ import annotations

import pytest

from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.writes.object_writes import delete_object
from loadmaster.runtime.requests.writes.status_writes import report_replica_status
from loadmaster.runtime.scheduling.retry_policy import ATTEMPTS_AT_CADENCE
from tests.controlplane.conftest import (
    add_nodes,
    apply,
    catch_up,
    clock_of,
    deployment,
    phase_condition,
    placements,
    replicas,
    settle,
)

pytestmark = pytest.mark.anyio


async def _backing_off(plane: ControlPlane, name: str) -> dict[str, object]:
    """Cycle (one forced cycle a second, as the tick would) until ``name`` is in its backoff."""
    scheduler = plane.scheduler
    assert scheduler is not None
    for _ in range(ATTEMPTS_AT_CADENCE):
        await scheduler.reconcile_once(force=True)
        await catch_up(plane)
        clock_of(plane).advance(1)
    details = phase_condition(replicas(plane)[name])["details"]
    assert details["attempts"] == ATTEMPTS_AT_CADENCE and details["next_attempt_at"], details
    return dict(details)


async def _too_big_replica_backing_off(plane: ControlPlane) -> dict[str, object]:
    """``big-api-0`` (2 CPUs) on a cluster of one 1-CPU node ``n1``, cycled into its backoff."""
    await add_nodes(plane, "n1", cpu="1")
    await apply(plane, deployment(name="big", replicas=1, cpu="2"))
    await settle(plane)
    return await _backing_off(plane, "big-api-0")


async def test_capacity_freed_on_a_node_retries_a_backing_off_replica_at_once(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1", cpu="2")
    await apply(plane, deployment(name="old", replicas=1, cpu="1500m"))
    await settle(plane)
    await apply(plane, deployment(name="new", replicas=1, cpu="1500m"))
    await settle(plane)
    await _backing_off(plane, "new-api-0")
    await delete_object(plane, "Deployment", "old", "user")
    await settle(plane)
    await report_replica_status(plane, "old-api-0", {"phase": "Terminated"})  # its agent stopped it
    await settle(plane)
    assert placements(plane)["new-api-0"] == "n1"
    assert phase_condition(replicas(plane)["new-api-0"])["details"]["attempts"] == ATTEMPTS_AT_CADENCE + 1


async def test_room_that_cannot_fit_the_replica_leaves_its_backoff_alone(plane: ControlPlane) -> None:
    before = await _too_big_replica_backing_off(plane)
    await add_nodes(plane, "n2", cpu="1")  # room, but not enough for it
    await add_nodes(plane, "n3", cpu="8", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}])
    scheduler = plane.scheduler
    assert scheduler is not None
    await catch_up(plane)
    assert await scheduler.reconcile_once() is None  # nothing due: no cycle, no attempt
    assert phase_condition(replicas(plane)["big-api-0"])["details"] == before


async def test_the_admin_trigger_retries_every_backing_off_replica_and_keeps_a_backoff_that_said_nothing_new(
    plane: ControlPlane,
) -> None:
    before = await _too_big_replica_backing_off(plane)
    scheduler = plane.scheduler
    assert scheduler is not None
    for _ in range(2):  # each trigger waives the backoff once more
        assert plane.trigger_reconcile() is True
        report = await scheduler.reconcile_once(force=True)  # what the loop runs for the trigger
        # Attempted, and failed as its record says: nothing written, attempts and next attempt kept.
        assert report is not None and (report.attempted, report.kept, report.decisions) == (1, 1, {})
        await catch_up(plane)
        assert phase_condition(replicas(plane)["big-api-0"])["details"] == before
        # The waiver lasted one attempt: the replica is back in its backoff, so no cycle is due.
        assert await scheduler.reconcile_once() is None


async def test_a_triggered_retry_that_fails_differently_is_recorded_with_a_fresh_backoff(
    plane: ControlPlane,
) -> None:
    before = await _too_big_replica_backing_off(plane)
    await add_nodes(plane, "n2", cpu="1")  # no room for it, but the explanation counts two nodes now
    await catch_up(plane)
    assert plane.trigger_reconcile() is True
    scheduler = plane.scheduler
    assert scheduler is not None
    report = await scheduler.reconcile_once(force=True)
    assert report is not None and report.decisions == {"wait": 1} and report.kept == 0
    await catch_up(plane)
    condition = phase_condition(replicas(plane)["big-api-0"])
    assert condition["message"].startswith("0/2 nodes can take it")
    assert condition["details"]["attempts"] == ATTEMPTS_AT_CADENCE + 1
    assert condition["details"]["next_attempt_at"] > before["next_attempt_at"]  # same format: ordered
    assert await scheduler.reconcile_once() is None
