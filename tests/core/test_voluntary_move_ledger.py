"""Consolidation obeys the voluntary-move ledger: cooldowns, closed nodes, the 0.75 pressure cap."""

from __future__ import annotations

import dataclasses

import pytest

from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.core.voluntary_moves import REPLICA_COOLDOWN_S, VoluntaryMoves
from loadmaster.cycle import run_cycle

NOW_S = 100_000.0


def fragmented(**moved_task_fields: object) -> Cluster:
    """Two 2-GPU nodes with one GPU busy each, and a pending 2-GPU job: consolidation moves r2-0 (the
    newer) to node-0 so that p-0 fits on node-1 (tests/scenarios/consolidate/...-to-defragment.yaml)."""
    nodes = tuple(Node(f"node-{i}", {"gpu": 2000}, {"gpu": 2000}) for i in range(2))
    r2 = Task("r2-0", "r2", {"gpu": 1000}, TaskStatus.RUNNING, "node-1", **moved_task_fields)  # type: ignore[arg-type]
    jobs = (
        Job("r1", (Task("r1-0", "r1", {"gpu": 1000}, TaskStatus.RUNNING, "node-0", bound_at_s=0.0),)),
        Job("r2", (r2,)),
        Job("p", (Task("p-0", "p", {"gpu": 2000}),)),
    )
    return Cluster(nodes, jobs, config=SchedulerConfig(actions=("consolidate",)))


def with_ledger(cluster: Cluster, ledger: VoluntaryMoves) -> Cluster:
    return dataclasses.replace(cluster, config=dataclasses.replace(cluster.config, voluntary_moves=ledger))


def moved(cluster: Cluster) -> list[str]:
    return [d.task for d in run_cycle(cluster, NOW_S).decisions if d.kind == "move"]


def test_without_a_ledger_consolidation_moves_as_before() -> None:
    assert moved(fragmented(bound_at_s=NOW_S - 1)) == ["r2-0"]


def test_an_open_ledger_lets_an_old_replica_move() -> None:
    assert moved(with_ledger(fragmented(bound_at_s=0.0), VoluntaryMoves(NOW_S))) == ["r2-0"]


@pytest.mark.parametrize(
    ("task_fields", "ledger"),
    [
        pytest.param(
            {"bound_at_s": NOW_S - REPLICA_COOLDOWN_S + 1}, VoluntaryMoves(NOW_S), id="bound-recently"
        ),
        pytest.param({"hosts": ("node-1", "node-0")}, VoluntaryMoves(NOW_S), id="pinned-by-hosts"),
        pytest.param({}, VoluntaryMoves(NOW_S, closed_nodes=frozenset({"node-0"})), id="destination-closed"),
        pytest.param({}, VoluntaryMoves(NOW_S, pressure={"node-0": (0.70, 0.10)}), id="destination-pressure"),
    ],
)
def test_a_move_the_ledger_forbids_is_refused_and_the_other_offer_taken(
    task_fields: dict[str, object], ledger: VoluntaryMoves
) -> None:
    cluster = with_ledger(fragmented(**{"bound_at_s": 0.0, **task_fields}), ledger)
    assert moved(cluster) == ["r1-0"]  # r2-0 stays; r1-0 goes to node-1 instead, p-0 to node-0


def test_a_replica_whose_replacement_is_under_way_is_not_moved() -> None:
    """r2-0.next (a make-before-break replacement of r2-0, its own non-preemptible job here) is in the
    cluster: r2-0 stays, and r1-0 goes instead. The snapshot finds it from the columns' replacements."""
    cluster = fragmented(bound_at_s=0.0)
    replacement = Job("r2-next", (Task("r2-0.next", "r2-next", {}),), preemptible=False)
    cluster = dataclasses.replace(cluster, jobs=(*cluster.jobs, replacement))
    assert moved(with_ledger(cluster, VoluntaryMoves(NOW_S))) == ["r1-0"]
    assert moved(with_ledger(fragmented(bound_at_s=0.0), VoluntaryMoves(NOW_S))) == ["r2-0"]


def test_with_every_destination_closed_nothing_moves_and_the_job_waits() -> None:
    closed = VoluntaryMoves(NOW_S, closed_nodes=frozenset({"node-0", "node-1"}))
    plan = run_cycle(with_ledger(fragmented(bound_at_s=0.0), closed), NOW_S)
    assert [d.kind for d in plan.decisions] == []
    assert plan.tasks["p-0"].status == "Pending"


def test_a_destination_below_the_cap_after_the_move_is_fine() -> None:
    ledger = VoluntaryMoves(NOW_S, pressure={"node-0": (0.62, 0.10)})  # 0.62 + 0.12 = 0.74 < 0.75
    assert moved(with_ledger(fragmented(bound_at_s=0.0), ledger)) == ["r2-0"]


def test_a_replica_leaves_a_closed_node_for_the_one_open_node_with_one_move_left() -> None:
    """Closed means closed to arrivals: r2-0 may still leave node-0 (closed) for node-1, the only open
    node where it fits. On CPU rows with one move left, the search keeps to the tasks that could be the
    move (actions/victims/one_move.py); r2-0 also fits the room left on its own node, which is no
    destination of a move when that node is closed, so r2-0 counts as movable."""
    nodes = tuple(Node(f"node-{i}", {"cpu": 2000}, {"cpu": 2000}) for i in range(2))
    jobs = (
        Job("r1", (Task("r1-0", "r1", {"cpu": 1000}, TaskStatus.RUNNING, "node-1", bound_at_s=0.0),)),
        Job("r2", (Task("r2-0", "r2", {"cpu": 1000}, TaskStatus.RUNNING, "node-0", bound_at_s=0.0),)),
        Job("p", (Task("p-0", "p", {"cpu": 2000}),)),
    )
    config = SchedulerConfig(
        actions=("consolidate",),
        max_consolidation_moves=1,
        voluntary_moves=VoluntaryMoves(NOW_S, closed_nodes=frozenset({"node-0"})),
    )
    plan = run_cycle(Cluster(nodes, jobs, config=config), NOW_S)
    assert [(d.task, d.kind, d.node) for d in plan.decisions] == [
        ("r2-0", "move", "node-1"),
        ("p-0", "pipeline", "node-0"),
    ]
