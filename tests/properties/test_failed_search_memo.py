"""Consolidate does not play again a search that an earlier one of the same task classes settles on the
same state (actions/victims/failed_searches.py), nor work out again a node's offer that an earlier
search of the class worked out on the same state and candidates (actions/victims/offer_memo.py): a
cycle decides and explains the same as with every search played."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import event, given, settings
from hypothesis import strategies as st

from loadmaster.actions.victims.failed_searches import FailedSearches
from loadmaster.actions.victims.offer_memo import OfferMemo
from loadmaster.actions.victims.search import VictimRules, VictimSearch
from loadmaster.core.model import Cluster, Job, Node, Queue, SchedulerConfig, Task, TaskStatus
from loadmaster.cycle import CyclePlan, run_cycle
from tests.properties.strategies import assert_same_cycle

WAITING = ({"cpu": 2000}, {"cpu": 3000}, {"cpu": 2000, "memory": 2**30})  # a few shapes: classes repeat


@st.composite
def backlogs(draw: st.DrawFn) -> Cluster:
    """Nodes of 4 CPUs filled by running elastic jobs of one- and two-CPU tasks up to a fragment of free
    room each, and a backlog of pending jobs of a few shapes (each larger than most fragments: they
    fit only once something moves) in two queues, one sometimes with a CPU limit. Some running jobs
    also wait for more tasks and come first (a higher priority): their own units are left out of
    their searches, not out of the later ones."""
    count = draw(st.integers(2, 4))
    nodes = [Node(f"node-{i}", {"cpu": 4000, "memory": 8 * 2**30}, {"cpu": 4000, "memory": 8 * 2**30})
             for i in range(count)]  # fmt: skip
    running: dict[int, list[Task]] = {}
    for i in range(count):
        used = 0
        for k in range(draw(st.integers(1, 4))):
            cpu = draw(st.sampled_from([1000, 2000]))
            if used + cpu > 4000:
                break
            used += cpu
            j = draw(st.integers(0, 3))
            name = f"run-{j}"
            running.setdefault(j, []).append(
                Task(f"{name}-{i}-{k}", name, {"cpu": cpu}, TaskStatus.RUNNING, f"node-{i}")
            )
    jobs = []
    for j, tasks in sorted(running.items()):
        extra = tuple(
            Task(f"run-{j}-more-{k}", f"run-{j}", dict(draw(st.sampled_from(WAITING))))
            for k in range(draw(st.integers(0, 2)))
        )
        minimum = draw(st.integers(1, len(tasks)))
        jobs.append(Job(f"run-{j}", (*tasks, *extra), "a", 50 if extra else 10, min_available=minimum))
    for j in range(draw(st.integers(2, 6))):
        shape = draw(st.sampled_from(WAITING))
        size = draw(st.integers(1, 2))
        tasks = tuple(Task(f"wait-{j}-{k}", f"wait-{j}", dict(shape)) for k in range(size))
        queue, priority = draw(st.sampled_from(["a", "b"])), draw(st.sampled_from([10, 50]))
        jobs.append(Job(f"wait-{j}", tasks, queue, priority, min_available=draw(st.integers(1, size))))
    limit = {"cpu": draw(st.integers(1, 4)) * 1000} if draw(st.booleans()) else {}
    queues = (Queue("a"), Queue("b", limit=limit))
    config = SchedulerConfig(
        actions=("allocate", "consolidate"),
        max_consolidation_moves=draw(st.integers(1, 6)),
        max_eviction_ratio=draw(st.sampled_from([0.5, 1.0, 4.0, 100.0])),
    )
    return Cluster(tuple(nodes), tuple(jobs), queues, config)


def every_search_played(cluster: Cluster) -> CyclePlan:
    with (
        patch.object(FailedSearches, "recall", lambda *_: None),
        patch.object(OfferMemo, "recall", lambda *_: (False, None)),
    ):
        return run_cycle(cluster)


@settings(max_examples=400)
@given(backlogs())
def test_a_cycle_decides_and_explains_the_same_when_a_failed_search_settles_later_ones(
    cluster: Cluster,
) -> None:
    """Each settled search is also played (on the same state, before the cycle goes on): it fails, with
    the reason recalled. A search's note is mostly dropped (allocate explained the task first), so the
    cycles alone would rarely tell a wrong recall."""
    recalled: list[str] = []
    rules: list[VictimRules] = []
    original_recall, original_init = FailedSearches.recall, VictimSearch.__init__

    def remembering(self, session, victim_rules, job, tasks, index):  # type: ignore[no-untyped-def]
        rules.append(victim_rules)
        original_init(self, session, victim_rules, job, tasks, index)

    def checked(self, pool, job, tasks):  # type: ignore[no-untyped-def]
        found = original_recall(self, pool, job, tasks)
        if found is not None:
            recalled.append(found)
            played = VictimSearch(self._session, rules[-1], job, list(tasks), self._index).run(pool)
            assert played == (None, found)
        return found

    with patch.object(FailedSearches, "recall", checked), patch.object(VictimSearch, "__init__", remembering):
        fast = run_cycle(cluster)
    plain = every_search_played(cluster)
    event("a search settled by an earlier one" if recalled else "none settled")
    event("moves made" if any(d.kind == "move" for d in plain.decisions) else "no move")
    assert_same_cycle(fast, plain)


@settings(max_examples=400)
@given(backlogs())
def test_a_remembered_node_offer_is_the_offer_worked_out_again_and_the_cycle_is_the_same(
    cluster: Cluster,
) -> None:
    recalled: list[bool] = []
    original_recall, original_offer = OfferMemo.recall, VictimSearch._offer

    def recording(self, key, stamp, n, on_node):  # type: ignore[no-untyped-def]
        known, offer = original_recall(self, key, stamp, n, on_node)
        recalled.append(known)
        return known, offer

    def checked(self, chosen, on_node, i, n):  # type: ignore[no-untyped-def]
        before = len(recalled)
        offer = original_offer(self, chosen, on_node, i, n)
        if len(recalled) > before and recalled[-1]:
            again = self._work_out_offer(chosen, on_node, i, n)
            assert offer == again
        return offer

    with (
        patch.object(OfferMemo, "recall", recording),
        patch.object(VictimSearch, "_offer", checked),
        patch.object(FailedSearches, "recall", lambda *_: None),  # every search played: offers recalled
    ):
        fast = run_cycle(cluster)
    plain = every_search_played(cluster)
    event("a node offer recalled" if any(recalled) else "none recalled")
    event("moves made" if any(d.kind == "move" for d in plain.decisions) else "no move")
    assert_same_cycle(fast, plain)
