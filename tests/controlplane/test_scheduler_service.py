"""The scheduler service against a real store (memory and SQLite) with a fake clock."""

from __future__ import annotations

from collections import Counter

import pytest
from structlog.testing import capture_logs

from loadmaster.manifests import NODE
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.storage.store_layout import AUDIT, SCALE_UP
from loadmaster.runtime.requests.writes.object_writes import delete_object
from loadmaster.runtime.requests.writes.status_writes import heartbeat, report_replica_status
from loadmaster.runtime.scheduling.retry_policy import BACKOFF
from loadmaster.runtime.scheduling.scheduler_service import BACKOFF_LOG_LINES
from loadmaster.store.codec import decode
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


async def test_applied_replicas_are_scheduled_with_node_ref_and_a_phase_condition(
    plane: ControlPlane,
) -> None:
    await add_nodes(plane, "n1", "n2")
    await apply(plane, deployment(replicas=3))
    await settle(plane)
    objects = replicas(plane)
    assert sorted(objects) == ["shop-api-0", "shop-api-1", "shop-api-2"]
    for obj in objects.values():
        assert obj["status"]["phase"] == "Scheduled"
        assert obj["status"]["node_ref"] in ("n1", "n2")
        condition = phase_condition(obj)
        assert (condition["status"], condition["reason"]) == ("True", "Scheduled")
        assert condition["details"]["attempts"] == 1
        assert condition["last_transition_time"].startswith("2026-11-21T10:00:00")


async def test_the_service_counter_moves_with_its_replicas_and_never_goes_back(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1")
    await apply(plane, deployment(replicas=3))
    await settle(plane)
    assert plane.cache.counters[("shop", "api")][0] == 3
    await apply(plane, deployment(replicas=1))
    await settle(plane)
    phases = {name: obj["status"]["phase"] for name, obj in replicas(plane).items()}
    assert phases == {"shop-api-0": "Scheduled", "shop-api-1": "Terminating", "shop-api-2": "Terminating"}
    for name in ("shop-api-1", "shop-api-2"):  # their agent stops them
        await report_replica_status(plane, name, {"phase": "Terminated"})
    await apply(plane, deployment(replicas=2))
    await settle(plane)
    assert sorted(replicas(plane)) == ["shop-api-0", "shop-api-3"]  # 1 and 2 are never handed out again
    assert plane.cache.counters[("shop", "api")][0] == 4


async def test_an_unplaceable_replica_makes_four_attempts_then_backs_off_five_minutes(
    plane: ControlPlane,
) -> None:
    await add_nodes(plane, "n1", cpu="1")
    await apply(plane, deployment(replicas=1, cpu="2"))
    await catch_up(plane)
    scheduler, controllers = plane.scheduler, plane.controllers
    assert scheduler is not None and controllers is not None
    await controllers.reconcile_once()
    await catch_up(plane)
    for attempt in range(1, 5):
        report = await scheduler.reconcile_once()
        assert report is not None and report.decisions == {"wait": 1}
        await catch_up(plane)
        condition = phase_condition(replicas(plane)["shop-api-0"])
        assert condition["details"]["attempts"] == attempt
        assert ("next_attempt_at" in condition["details"]) is (attempt == 4)
    assert condition["reason"] == "Unschedulable"
    assert condition["details"]["summary"] == {"capacity": 1}
    assert "0/1 nodes can take it: 1 capacity" in condition["message"]
    assert condition["details"]["next_attempt_at"] == "2026-11-21T10:05:00Z"
    assert await scheduler.reconcile_once() is None  # waiting out the backoff: not attempted
    clock_of(plane).advance(BACKOFF.total_seconds())
    await heartbeat(plane, "n1", {})  # five minutes of silence would make it NotReady
    await catch_up(plane)
    assert (await scheduler.reconcile_once()) is not None
    await catch_up(plane)
    condition = phase_condition(replicas(plane)["shop-api-0"])
    assert (condition["details"]["attempts"], condition["details"]["next_attempt_at"]) == (
        5,
        "2026-11-21T10:10:00Z",
    )
    metrics = plane.metrics.render().decode()
    assert "loadmaster_retries_total 3.0" in metrics
    assert "loadmaster_max_retries_total 2.0" in metrics
    assert 'loadmaster_failures_total{reason="capacity"} 5.0' in metrics
    entries, _ = await plane.store.list(AUDIT)
    backoffs = [decode(e.value) for e in entries if decode(e.value)["type"] == "placement_backoff"]
    assert [(b["object"], b["details"]["attempts"], b["details"]["next_attempt_at"]) for b in backoffs] == [
        ("replicas/shop-api-0", 4, "2026-11-21T10:05:00Z"),
        ("replicas/shop-api-0", 5, "2026-11-21T10:10:00Z"),
    ]


async def test_entering_the_backoff_is_logged_once_at_error_level(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1", cpu="1")
    await apply(plane, deployment(replicas=1, cpu="2"))
    await catch_up(plane)
    scheduler, controllers = plane.scheduler, plane.controllers
    assert scheduler is not None and controllers is not None
    await controllers.reconcile_once()
    await catch_up(plane)
    with capture_logs() as entries:
        for _ in range(6):  # attempts 1-4, then two more, each after its backoff
            await scheduler.reconcile_once(force=True)
            await catch_up(plane)
            clock_of(plane).advance(BACKOFF.total_seconds())
            await heartbeat(plane, "n1", {})
            await catch_up(plane)
    assert phase_condition(replicas(plane)["shop-api-0"])["details"]["attempts"] == 6
    errors = [e for e in entries if e["log_level"] == "error"]
    assert [(e["event"], e["replica"]) for e in errors] == [("replica backs off placement", "shop-api-0")]


async def test_many_replicas_entering_the_backoff_at_once_log_a_line_each_up_to_a_bound_then_one_more(
    plane: ControlPlane,
) -> None:
    await add_nodes(plane, "n1", cpu="1")
    await apply(plane, deployment(replicas=BACKOFF_LOG_LINES + 5, cpu="2"))
    await catch_up(plane)
    scheduler, controllers = plane.scheduler, plane.controllers
    assert scheduler is not None and controllers is not None
    await controllers.reconcile_once()
    await catch_up(plane)
    with capture_logs() as entries:
        for _ in range(4):  # attempts 1-4: the 4th enters the backoff
            await scheduler.reconcile_once(force=True)
            await catch_up(plane)
    errors = [e for e in entries if e["log_level"] == "error"]
    assert [e["event"] for e in errors] == ["replica backs off placement"] * BACKOFF_LOG_LINES + [
        "more replicas back off placement"
    ]
    assert errors[-1]["replicas"] == 5
    metrics = plane.metrics.registry
    assert metrics.get_sample_value("loadmaster_max_retries_total") == BACKOFF_LOG_LINES + 5
    assert metrics.get_sample_value("loadmaster_retries_total") == 3 * (BACKOFF_LOG_LINES + 5)


async def test_hosts_placement_places_nothing_until_every_host_can_take_a_replica(
    plane: ControlPlane,
) -> None:
    await add_nodes(plane, "n1", "n2")
    await apply(plane, deployment(replicas=3, placement="hosts", extra="hosts: [n1, n2, n3]"))
    await settle(plane)
    assert set(placements(plane).values()) == {None}
    condition = phase_condition(replicas(plane)["shop-api-0"])
    assert condition["reason"] == "cannot_satisfy_host_placement"
    assert condition["details"]["pending"] == {"reason": "cannot_satisfy_host_placement", "missing": ["n3"]}
    await add_nodes(plane, "n3")
    await settle(plane)
    assert sorted(placements(plane).values()) == ["n1", "n2", "n3"]


async def test_a_global_service_follows_the_set_of_ready_nodes(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1", "n2")
    await apply(plane, deployment(placement="global"))
    await settle(plane)
    assert placements(plane) == {"shop-api-n1": "n1", "shop-api-n2": "n2"}
    clock_of(plane).advance(91)
    await heartbeat(plane, "n1", {})
    await settle(plane)
    nodes = {name: c.obj["status"]["state"] for name, c in plane.cache.objects[NODE].items()}
    assert nodes == {"n1": "Ready", "n2": "NotReady"}
    assert "shop-api-n2" not in replicas(plane)  # dropped at once (nobody can confirm a stop), not moved
    await add_nodes(plane, "n3")
    await settle(plane)
    assert placements(plane)["shop-api-n3"] == "n3"


async def test_spread_placement_moves_nothing_when_a_node_joins(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1", "n2", "n3", "n4")
    await apply(plane, deployment(replicas=20, cpu="10m"))
    await settle(plane)
    before = placements(plane)
    assert sorted(Counter(before.values()).values()) == [5, 5, 5, 5]  # even: max skew 1
    await add_nodes(plane, "n5")
    await settle(plane)
    assert placements(plane) == before
    await apply(plane, deployment(replicas=25, cpu="10m"))
    await settle(plane)
    after = placements(plane)
    assert {name: node for name, node in after.items() if name in before} == before
    assert {after[f"shop-api-{i}"] for i in range(20, 25)} == {"n5"}  # the node with the fewest


async def test_pack_placement_piles_onto_the_node_with_fewest_replicas_first(plane: ControlPlane) -> None:
    """JACO C3: by replica count of any service, ascending, then the AVA order, then the name."""
    await add_nodes(plane, "n1", "n2", "n3", cpu="4")
    await apply(plane, deployment(replicas=5, placement="pack", cpu="1"))
    await settle(plane)
    assert placements(plane) == {
        "shop-api-0": "n1", "shop-api-1": "n2", "shop-api-2": "n3", "shop-api-3": "n1", "shop-api-4": "n2",
    }  # fmt: skip


async def test_a_failed_replica_stays_failed_and_is_not_replaced(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1")
    await apply(plane, deployment(replicas=1))
    await settle(plane)
    await report_replica_status(plane, "shop-api-0", {"phase": "Running"})
    await report_replica_status(plane, "shop-api-0", {"phase": "Failed", "message": "exit 3", "exit_code": 3})
    await settle(plane)
    assert list(replicas(plane)) == ["shop-api-0"]
    assert replicas(plane)["shop-api-0"]["status"]["phase"] == "Failed"


async def test_a_deleted_node_sends_its_replicas_back_to_be_placed_elsewhere(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1")
    await apply(plane, deployment(replicas=2))
    await settle(plane)
    await add_nodes(plane, "n2")
    await delete_object(plane, NODE, "n1", "admin")
    await settle(plane)
    assert placements(plane) == {"shop-api-0": "n2", "shop-api-1": "n2"}


async def test_a_replica_of_a_missing_queue_waits_with_a_clear_reason(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1")
    await apply(plane, deployment(replicas=1, extra="queue: team-a"))
    await settle(plane)
    condition = phase_condition(replicas(plane)["shop-api-0"])
    assert (condition["reason"], condition["message"].split(";")[0]) == (
        "QueueNotFound",
        "queue team-a does not exist",
    )
    await apply(plane, "api_version: loadmaster/v1\nkind: Queue\nmetadata: {name: team-a}\nspec: {}\n")
    await settle(plane)
    assert placements(plane) == {"shop-api-0": "n1"}


async def test_nothing_fits_so_a_scale_up_is_requested_from_the_best_template(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1", cpu="1")
    await apply(
        plane,
        """
api_version: loadmaster/v1
kind: WorkerTemplate
metadata: {name: small}
spec: {capacity: {cpu: 2, memory: 8Gi}}
---
api_version: loadmaster/v1
kind: WorkerTemplate
metadata: {name: medium}
spec: {capacity: {cpu: 8, memory: 32Gi}}
---
api_version: loadmaster/v1
kind: WorkerTemplate
metadata: {name: large}
spec: {capacity: {cpu: 64, memory: 256Gi}}
""",
    )
    await apply(plane, deployment(replicas=2, cpu="4"))
    await settle(plane)
    entries, _ = await plane.store.list(SCALE_UP)
    requests = [decode(entry.value) for entry in entries]
    assert [(r["template"], r["tier"], r["count"]) for r in requests] == [("medium", "smallest_fit", 2)]
    audit = [decode(e.value) for e in (await plane.store.list(AUDIT))[0]]
    assert [a["object"] for a in audit if a["type"] == "scale_up"] == ["workertemplates/medium"]
    assert 'loadmaster_scale_up_requests_total{template="medium"} 1.0' in plane.metrics.render().decode()


async def test_the_audit_log_records_leadership_apply_and_schedule(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1")
    await apply(plane, deployment(replicas=2))
    await settle(plane)
    audit = [decode(e.value) for e in (await plane.store.list(AUDIT))[0]]
    assert [a["seq"] for a in audit] == sorted({a["seq"] for a in audit})
    types = [a["type"] for a in audit]
    assert types[0] == "leadership"
    assert "apply" in types and "schedule" in types
    schedule = next(a for a in audit if a["type"] == "schedule")
    assert schedule["details"]["bindings"] == {"shop-api-0": "n1", "shop-api-1": "n1"}


async def test_a_replica_is_converted_to_a_task_only_when_it_changes(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1")
    await apply(plane, deployment(name="a", replicas=1))
    await settle(plane)
    model = plane.model
    assert model is not None
    model.build(clock_of(plane).now())
    kept = model.replicas["a-api-0"].task
    assert kept is not None
    await apply(plane, deployment(name="b", replicas=1))
    await settle(plane)
    model.build(clock_of(plane).now())
    assert model.replicas["a-api-0"].task is kept  # the untouched replica was not converted again


async def test_the_safety_tick_runs_a_cycle_only_when_one_has_something_to_decide(
    plane: ControlPlane,
) -> None:
    scheduler = plane.scheduler
    assert scheduler is not None
    await add_nodes(plane, "n1")
    await apply(plane, deployment(replicas=2))
    assert plane.controllers is not None
    await catch_up(plane)
    await plane.controllers.reconcile_once()  # creates the replicas, Pending
    await catch_up(plane)
    assert scheduler.tick_has_work()  # two Pending replicas
    await settle(plane)
    assert not scheduler.tick_has_work()  # placed services only: a cycle would decide nothing
    await apply(
        plane, "api_version: loadmaster/v1\nkind: Job\nmetadata: {name: train}\nspec: {tasks: 1, image: t}\n"
    )
    await settle(plane)
    assert scheduler.tick_has_work()  # a job's gang may go stale with nothing Pending
