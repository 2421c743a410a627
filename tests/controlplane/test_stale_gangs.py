"""Stale gangs from stored times (runtime/scheduling/stale_gangs.py): since when a gang Job has been
below min_available, counting a task on a NotReady node as not active."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from loadmaster.core.model import Job, Node
from loadmaster.runtime.scheduling.model.model_entries import NodeEntry, ReplicaState
from loadmaster.runtime.scheduling.stale_gangs import stale_gangs, stale_since, with_stale_for

NOW = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
WINDOW = timedelta(seconds=90)


def stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def entry(heartbeat_ago_s: float, lost: bool = True) -> NodeEntry:
    shape = Node("n", {"cpu": 4000}, {"cpu": 4000}, state="NotReady")
    return NodeEntry(shape, NOW - timedelta(seconds=heartbeat_ago_s), False, WINDOW, lost=lost)


# "down": NotReady since 60 s ago and lost (the node-loss policy acted); "silent": not acted on yet.
NODES = {"ready": entry(10), "down": entry(150), "silent": entry(150, lost=False)}


def task(
    index: int,
    phase: str,
    node: str | None = None,
    since_s: float = 0.0,
    inactive_since_s: float | None = None,
    gang: int = 3,
) -> ReplicaState:
    status: dict[str, object] = {
        "phase": phase,
        "conditions": [{"type": "Phase", "last_transition_time": stamp(NOW - timedelta(seconds=since_s))}],
    }
    if node is not None:
        status["node_ref"] = node
    if inactive_since_s is not None:
        status["inactive_since"] = stamp(NOW - timedelta(seconds=inactive_since_s))
    obj = {
        "metadata": {"name": f"train-{index}", "created_at": stamp(NOW - timedelta(hours=1))},
        "spec": {"owner_kind": "Job", "owner": "train", "index": index, "min_available": gang},
        "status": status,
    }
    return ReplicaState(
        f"train-{index}",
        1,
        1,
        obj,
        "train",
        (index, f"train-{index}"),
        phase,
        node,
        phase != "Pending",
        0,
        None,
    )


def test_a_whole_gang_is_not_stale() -> None:
    members = [task(i, "Running", "ready") for i in range(3)]
    assert stale_since(members, 3, NODES, NOW) is None


def test_a_task_on_a_not_ready_node_is_not_active_and_the_gang_is_stale_since_the_node_went_not_ready() -> (
    None
):
    members = [task(0, "Running", "ready"), task(1, "Running", "ready"), task(2, "Running", "down")]
    assert stale_since(members, 3, NODES, NOW) == NOW - timedelta(seconds=60)


def test_a_gang_with_a_task_on_a_node_the_policy_has_not_acted_on_yet_is_held() -> None:
    members = [task(0, "Running", "ready"), task(1, "Running", "ready"), task(2, "Running", "silent")]
    assert stale_since(members, 3, NODES, NOW) is None


def test_a_task_moved_off_a_lost_node_keeps_counting_from_when_it_stopped_being_active() -> None:
    members = [
        task(0, "Running", "ready"),
        task(1, "Running", "ready"),
        task(2, "Pending", inactive_since_s=45),
    ]
    assert stale_since(members, 3, NODES, NOW) == NOW - timedelta(seconds=45)


def test_a_gang_short_of_two_is_stale_since_the_second_most_recent_loss() -> None:
    members = [
        task(0, "Running", "ready"),
        task(1, "Failed", since_s=30),
        task(2, "Running", "down"),
        task(3, "Failed", since_s=200),
    ]
    # 1 active of 3: below since the 2nd most recent of (30 s, 60 s, 200 s) ago.
    assert stale_since(members, 3, NODES, NOW) == NOW - timedelta(seconds=60)


def test_a_gang_with_nothing_active_is_not_stale() -> None:
    members = [task(i, "Running", "down") for i in range(3)]
    assert stale_since(members, 3, NODES, NOW) is None


def test_only_stale_gangs_get_a_stale_for() -> None:
    jobs = {
        "train": {f"train-{i}": task(i, "Running", "ready" if i else "down") for i in range(3)},
        "other": {"other-0": task(0, "Running", "ready", gang=1)},
    }
    stale = stale_gangs(jobs, ["train", "other"], NODES, NOW)
    assert stale == {"train": NOW - timedelta(seconds=60)}
    stamped = with_stale_for((Job("train", ()), Job("other", ())), stale, NOW)
    assert [job.stale_for_s for job in stamped] == [60.0, None]
