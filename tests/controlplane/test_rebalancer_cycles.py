"""The rebalancer on a real control plane (memory and SQLite stores, a fake clock): samples in, audit
entries, metrics and a reserved make-before-break replacement out, all in one transaction."""

from __future__ import annotations

import pytest

from loadmaster.manifests import REPLICA
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.storage.store_layout import AUDIT
from loadmaster.runtime.requests.writes.status_writes import heartbeat, register_node, report_node_status
from loadmaster.store.codec import decode
from tests.controlplane.conftest import add_nodes, apply, catch_up, clock_of, deployment, replicas, settle
from tests.controlplane.test_replacement_swap import report_running

pytestmark = pytest.mark.anyio

X = "shop-api-0"


async def sample(plane: ControlPlane, **shares: tuple[float, float]) -> None:
    """Every node heartbeats and reports its (cpu, memory) utilisation."""
    for node, (cpu, memory) in shares.items():
        await heartbeat(plane, node, {})
        await report_node_status(plane, node, {"pressure": {"cpu": cpu, "memory": memory}})
    await catch_up(plane)


async def cycle_after(plane: ControlPlane, seconds: float) -> list[str]:
    clock_of(plane).advance(seconds)
    await sample(plane, n1=(0.95, 0.30), n2=(0.20, 0.20))
    assert plane.rebalancer is not None
    moves = await plane.rebalancer.cycle_once()
    await catch_up(plane)
    return [move.replica for move in moves]


async def audit_of(plane: ControlPlane, kind: str) -> list[dict[str, object]]:
    entries, _ = await plane.store.list(AUDIT)
    return [decode(e.value) for e in entries if decode(e.value)["type"] == kind]


async def hot_n1_with_one_replica(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1", cpu="20", memory="64Gi")
    await apply(plane, deployment(replicas=1, cpu="4"))
    await settle(plane)
    await report_running(plane, X)
    await add_nodes(plane, "n2", cpu="20", memory="64Gi")


async def test_a_refused_candidate_is_audited_and_counted_and_the_ewma_is_a_gauge(
    plane: ControlPlane,
) -> None:
    await hot_n1_with_one_replica(plane)
    assert await cycle_after(plane, 30) == []
    assert await audit_of(plane, "rebalance_skipped") == []  # one hot cycle is not enough
    assert await cycle_after(plane, 30) == []
    [skip] = await audit_of(plane, "rebalance_skipped")
    assert skip["object"] == f"replicas/{X}"
    assert skip["details"]["reason"] == "cooldown_replica"  # type: ignore[index]
    metrics = plane.metrics.render().decode()
    assert 'loadmaster_rebalance_skips_total{reason="cooldown_replica"} 1.0' in metrics
    assert 'loadmaster_node_pressure{node="n1",resource="cpu"} 0.95' in metrics
    assert 'loadmaster_node_pressure{node="n2",resource="memory"} 0.2' in metrics


async def test_a_move_creates_the_replacement_on_the_reserved_node_with_its_audit_entry(
    plane: ControlPlane,
) -> None:
    await hot_n1_with_one_replica(plane)
    await cycle_after(plane, 600)  # the replica's 10-minute cooldown runs out meanwhile
    assert await cycle_after(plane, 30) == [X]
    replacement = replicas(plane)[f"{X}.next"]
    assert replacement["status"]["phase"] == "Scheduled" and replacement["status"]["node_ref"] == "n2"
    assert replacement["spec"]["replaces"] == X and replacement["spec"]["replacement_reason"] == "rebalance"
    assert replicas(plane)[X]["status"]["node_ref"] == "n1"  # still running there until the swap
    [moved] = await audit_of(plane, "rebalance_moved")
    assert moved["details"]["src"] == "n1" and moved["details"]["dst"] == "n2"  # type: ignore[index]
    assert "loadmaster_rebalance_moves_total 1.0" in plane.metrics.render().decode()
    # The replica has a move in flight: the next cycle does not move it again.
    assert await cycle_after(plane, 30) == []
    assert plane.cache.get(REPLICA, f"{X}.next") is not None


async def test_a_rebalancer_move_closes_its_destination_to_consolidation_for_two_minutes(
    plane: ControlPlane,
) -> None:
    await hot_n1_with_one_replica(plane)
    await cycle_after(plane, 600)
    assert await cycle_after(plane, 30) == [X]
    assert plane.rebalancer is not None
    now_s = plane.clock.now().timestamp()
    assert "n2" in plane.rebalancer.ledger.view(now_s).closed_nodes
    assert "n2" not in plane.rebalancer.ledger.view(now_s + 120).closed_nodes


GPU_ON_N2 = """
api_version: loadmaster/v1
kind: Deployment
metadata: {name: other}
spec:
  services:
    - name: api
      image: "o:1"
      replicas: 1
      placement: hosts
      hosts: [n2]
      resources: {cpu: 1, memory: 64Mi}
      gpus: 1
"""


@pytest.mark.parametrize(
    ("n2_gpus", "n2_used", "moved"),
    [
        pytest.param("1", False, [X], id="n2-has-a-gpu-free"),
        pytest.param("0", False, [], id="n2-has-no-gpu"),
        pytest.param("1", True, [], id="n2-gpu-taken"),
    ],
)
async def test_a_gpu_replica_moves_only_to_a_node_with_a_gpu_free(
    plane: ControlPlane, n2_gpus: str, n2_used: bool, moved: list[str]
) -> None:
    await register_node(
        plane, {"name": "n1", "capacity": {"cpu": "20", "memory": "64Gi", "gpu": "1"}}, "agent"
    )
    await apply(plane, deployment(replicas=1, cpu="4", extra="gpus: 1"))
    await settle(plane)
    await report_running(plane, X)
    capacity = {"cpu": "20", "memory": "64Gi", "gpu": n2_gpus}
    await register_node(plane, {"name": "n2", "capacity": capacity}, "agent")
    if n2_used:
        await apply(plane, GPU_ON_N2)
        await settle(plane)
    await cycle_after(plane, 600)
    # The second cycle sees only heartbeats and samples since the first: it reuses the replica columns.
    assert await cycle_after(plane, 30) == moved


async def test_a_move_whose_replacement_cannot_be_written_is_neither_audited_nor_a_cooldown(
    plane: ControlPlane,
) -> None:
    await hot_n1_with_one_replica(plane)
    await cycle_after(plane, 600)
    assert plane.rebalancer is not None
    plane.rebalancer._start_move = lambda move, now: []  # the replica changed after the cache was read
    assert await cycle_after(plane, 30) == []
    assert await audit_of(plane, "rebalance_moved") == []
    assert plane.rebalancer.ledger.view(plane.clock.now().timestamp()).closed_nodes == frozenset()
