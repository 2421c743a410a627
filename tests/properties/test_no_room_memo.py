"""The no-room memo (actions/no_room.py) is exact: a cycle decides and explains the same with it and
without it, over random clusters with many gangs of a few shapes (so that classes repeat)."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import event, given, settings
from hypothesis import strategies as st

from loadmaster.actions.no_room import NoRoomMemo
from loadmaster.core.model import PROFILES, Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.cycle import CyclePlan, run_cycle
from tests.properties.strategies import assert_same_cycle

SHAPES = ({"cpu": 1000}, {"cpu": 2000, "memory": 2**30}, {"cpu": 500, "gpu": 500})


@st.composite
def backlogs(draw: st.DrawFn) -> Cluster:
    """A few nodes, some running work, and a backlog of gangs drawn from three shapes."""
    nodes = tuple(
        Node(f"node-{i}", alloc, alloc)
        for i, alloc in enumerate(
            {
                "cpu": draw(st.integers(1, 6)) * 1000,
                "memory": 8 * 2**30,
                "gpu": draw(st.sampled_from([0, 2000])),
            }
            for _ in range(draw(st.integers(1, 5)))
        )
    )
    jobs = []
    for j in range(draw(st.integers(1, 14))):
        shape = draw(st.sampled_from(SHAPES))
        size = draw(st.integers(1, 6))
        running = j < len(nodes) and draw(st.integers(0, 3)) == 0  # one running task per node at most
        tasks = tuple(
            Task(
                f"job-{j}-{k}",
                f"job-{j}",
                dict(shape),
                TaskStatus.RUNNING if running and k == 0 else TaskStatus.PENDING,
                nodes[j if running else 0].name if running and k == 0 else None,
            )
            for k in range(size)
        )
        running_fits = not running or all(
            shape.get(r, 0) <= nodes[j if running else 0].allocatable.get(r, 0) for r in shape
        )
        if not running_fits:
            tasks = tuple(Task(t.name, t.job, dict(shape)) for t in tasks)
        jobs.append(Job(f"job-{j}", tasks, priority=draw(st.sampled_from([10, 50])),
                        min_available=draw(st.integers(1, size))))  # fmt: skip
    profile = draw(st.sampled_from(PROFILES))
    depth = draw(st.sampled_from([None, None, 0, 1, 3]))
    return Cluster(nodes, tuple(jobs), (), SchedulerConfig(profile=profile, backfill_depth=depth))


def without_memo(cluster: Cluster) -> CyclePlan:
    with patch.object(NoRoomMemo, "unplaced", lambda self, tasks: None):
        return run_cycle(cluster)


@settings(max_examples=200)
@given(backlogs())
def test_a_cycle_decides_and_explains_the_same_with_the_no_room_memo_and_without(cluster: Cluster) -> None:
    hits: list[int] = []
    original = NoRoomMemo.unplaced

    def counting(self: NoRoomMemo, tasks: list[int]) -> list[int] | None:
        found = original(self, tasks)
        hits.extend([] if found is None else [len(found)])
        return found

    with patch.object(NoRoomMemo, "unplaced", counting):
        fast = run_cycle(cluster)
    plain = without_memo(cluster)
    event("the memo skipped a gang" if hits else "the memo skipped nothing")
    assert_same_cycle(fast, plain)


def test_the_memo_skips_a_later_gang_of_the_same_class_that_cannot_fit() -> None:
    """The memo is used at all: the second 3-task gang on a 2-slot cluster is not placed task by task."""
    nodes = (Node("n0", {"cpu": 2000}, {"cpu": 2000}),)
    jobs = tuple(
        Job(f"g{j}", tuple(Task(f"g{j}-{k}", f"g{j}", {"cpu": 1000}) for k in range(3)), min_available=3)
        for j in range(2)
    )
    calls: list[int] = []
    original = NoRoomMemo.unplaced

    def counting(self: NoRoomMemo, tasks: list[int]) -> list[int] | None:
        found = original(self, tasks)
        calls.append(0 if found is None else len(found))
        return found

    with patch.object(NoRoomMemo, "unplaced", counting):
        plan = run_cycle(Cluster(nodes, jobs))
    assert calls == [0, 1]  # the first gang is tried (2 fit, 1 left), the second known: 1 left
    assert (
        plan.explanations["g1-0"].reason
        == "gang g1 needs 3 more tasks placed together (min_available 3); only 2 fit"
    )
