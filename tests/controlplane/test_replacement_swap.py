"""The replacement primitive in the runtime, without a timeline: ``StartReplacement`` stores ``X.next``,
the scheduler places it by its normal rules (avoiding the given nodes), and once it runs the swap is ONE
transaction; a leader that stops between any two steps leaves a store the next leader finishes from."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from loadmaster.controllers.changes import CompleteReplacement, StartReplacement
from loadmaster.manifests import REPLICA
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.errors import WriteConflictError
from loadmaster.runtime.plane.leadership.leader_local import LocalLeaderElector
from loadmaster.runtime.plane.storage.store_layout import AUDIT
from loadmaster.runtime.reconciling.writes.change_writes import write_changes
from loadmaster.runtime.requests.writes.status_writes import report_replica_status
from loadmaster.store.codec import decode
from tests.controlplane.conftest import add_nodes, apply, catch_up, deployment, replicas, settle

pytestmark = pytest.mark.anyio

X, NEXT = "shop-api-0", "shop-api-0.next"


async def report_running(plane: ControlPlane, name: str) -> None:
    """What the agent of the node running ``name`` reports, keyed by the incarnation it runs."""
    obj = replicas(plane)[name]
    body = {"phase": "Running", "incarnation": obj["spec"]["incarnation"]}
    await report_replica_status(plane, name, body)
    await catch_up(plane)


async def one_running_replica(plane: ControlPlane) -> dict[str, Any]:
    await add_nodes(plane, "n1", "n2")
    await apply(plane, deployment(replicas=1))
    await settle(plane)
    await report_running(plane, X)
    return replicas(plane)[X]


async def start_replacement(plane: ControlPlane, avoid: str) -> None:
    cached = plane.cache.get(REPLICA, X)
    assert cached is not None
    due = plane.clock.now() + timedelta(minutes=5)
    change = StartReplacement(X, cached.mod_revision, "drain", None, None, (avoid,), due)
    outcome = await write_changes(
        plane.store, plane.cache, [change], await plane.write_fence(), plane.clock.now(), plane.audit
    )
    assert outcome.written == 1
    await catch_up(plane)


async def audit_types(plane: ControlPlane) -> list[str]:
    entries, _ = await plane.store.list(AUDIT)
    return [decode(entry.value)["type"] for entry in entries]


async def successor(plane: ControlPlane) -> ControlPlane:
    """The leader stops between two steps (the fixture closes it); a new one starts from the store alone."""
    await plane.resign()
    new = ControlPlane(
        plane.store, LocalLeaderElector(plane.store, "next-server"), backend=plane.backend, clock=plane.clock
    )
    await new.start(run_loops=False)
    return new


async def test_a_replacement_is_placed_off_the_avoided_node_and_swapped_in_one_transaction(
    plane: ControlPlane,
) -> None:
    before = await one_running_replica(plane)
    source = before["status"]["node_ref"]
    await start_replacement(plane, avoid=source)
    await settle(plane)
    stored = replicas(plane)
    assert stored[X]["spec"]["incarnation"] == before["spec"]["incarnation"]  # the old one still runs
    assert stored[NEXT]["status"]["phase"] == "Scheduled"
    assert stored[NEXT]["status"]["node_ref"] not in (None, source)
    assert stored[NEXT]["spec"]["replaces"] == X
    new_incarnation = stored[NEXT]["spec"]["incarnation"]
    assert new_incarnation != before["spec"]["incarnation"]

    await report_running(plane, NEXT)
    assert plane.controllers is not None
    revision = await plane.store.revision()
    outcome = await plane.controllers.reconcile_once()
    await catch_up(plane)
    assert outcome.written == 1
    assert await plane.store.revision() == revision + 1  # the delete, the move and the audit: one txn
    after = replicas(plane)
    assert NEXT not in after
    assert after[X]["spec"]["incarnation"] == new_incarnation
    assert after[X]["status"]["phase"] == "Running"
    assert after[X]["status"]["node_ref"] == stored[NEXT]["status"]["node_ref"]
    assert "replaces" not in after[X]["spec"] and "avoid_nodes" not in after[X]["spec"]
    assert (await audit_types(plane))[-1] == "replica_rescheduled"


async def test_a_late_report_about_the_replaced_incarnation_is_refused(plane: ControlPlane) -> None:
    before = await one_running_replica(plane)
    await start_replacement(plane, avoid=before["status"]["node_ref"])
    await settle(plane)
    await report_running(plane, NEXT)
    await settle(plane)
    with pytest.raises(WriteConflictError, match="no longer assigned"):
        body = {"phase": "Terminated", "incarnation": before["spec"]["incarnation"]}
        await report_replica_status(plane, X, body)
    assert replicas(plane)[X]["status"]["phase"] == "Running"


async def test_a_swap_computed_from_a_stale_replica_writes_nothing(plane: ControlPlane) -> None:
    before = await one_running_replica(plane)
    await start_replacement(plane, avoid=before["status"]["node_ref"])
    await settle(plane)
    await report_running(plane, NEXT)
    old, new = plane.cache.get(REPLICA, X), plane.cache.get(REPLICA, NEXT)
    assert old is not None and new is not None
    stale = CompleteReplacement(X, old.mod_revision - 1, new.mod_revision, "drain")
    revision = await plane.store.revision()
    outcome = await write_changes(
        plane.store, plane.cache, [stale], await plane.write_fence(), plane.clock.now(), plane.audit
    )
    assert (outcome.written, len(outcome.conflicts)) == (0, 1)
    assert await plane.store.revision() == revision
    assert set(replicas(plane)) == {X, NEXT}


@pytest.mark.parametrize(
    "stop_after",
    [
        pytest.param("start", id="after-the-replacement-is-stored"),
        pytest.param("bind", id="after-the-replacement-is-bound"),
        pytest.param("running", id="after-the-replacement-runs"),
    ],
)
async def test_a_leader_stopping_between_steps_leaves_a_store_the_next_leader_completes(
    plane: ControlPlane, stop_after: str
) -> None:
    before = await one_running_replica(plane)
    source = before["status"]["node_ref"]
    await start_replacement(plane, avoid=source)
    if stop_after in ("bind", "running"):
        await settle(plane)
    if stop_after == "running":
        await report_running(plane, NEXT)
    plane = await successor(plane)
    # Consistent at the stop: the old incarnation under X, untouched, and one replacement beside it.
    stored = replicas(plane)
    assert set(stored) == {X, NEXT}
    assert stored[X]["spec"]["incarnation"] == before["spec"]["incarnation"]
    assert stored[X]["status"]["phase"] == "Running"
    await settle(plane)
    if NEXT in replicas(plane):
        await report_running(plane, NEXT)
        await settle(plane)
    after = replicas(plane)
    assert set(after) == {X}
    assert after[X]["status"]["node_ref"] != source
    assert after[X]["status"]["phase"] == "Running"
    await plane.close()
