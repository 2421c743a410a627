"""The failed-search backoff: the ledger's streaks and rests, and a cycle that skips a resting search."""

from __future__ import annotations

import dataclasses
import math

import pytest

from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.core.search_backoff import (
    Rest,
    RestingSearches,
    SearchBackoff,
    SearchBackoffLedger,
    SearchOutcome,
)
from loadmaster.cycle import run_cycle

NOW_S = 1_000.0
CONSOLIDATE = SearchBackoff(consolidate_min_s=30, consolidate_max_s=100)


def failed(job: str = "p", action: str = "consolidate") -> SearchOutcome:
    return SearchOutcome(action, job, found=False)


def rest_of(
    ledger: SearchBackoffLedger, now_s: float, job: str = "p", action: str = "consolidate"
) -> Rest | None:
    view = ledger.view(now_s)
    return view.of(action).get(job) if view is not None else None


def test_each_failure_in_a_row_doubles_the_rest_up_to_the_maximum() -> None:
    ledger = SearchBackoffLedger(CONSOLIDATE)
    now, rests = NOW_S, []
    for _ in range(5):
        ledger.record(now, [failed()])
        rest = rest_of(ledger, now)
        assert rest is not None
        rests.append((rest.until_s - now, rest.failures))
        now = rest.until_s  # searched again as soon as its rest ends
    assert rests == [(30, 1), (60, 2), (100, 3), (100, 4), (100, 5)]


def test_a_job_rests_until_its_time_and_not_a_moment_longer() -> None:
    ledger = SearchBackoffLedger(CONSOLIDATE)
    ledger.record(NOW_S, [failed()])
    assert rest_of(ledger, NOW_S + 29.9) == Rest(NOW_S + 30, 1)
    assert rest_of(ledger, NOW_S + 30) is None
    assert ledger.view(NOW_S + 30) is None  # nothing rests: the cycle gets no view at all


def test_the_next_rest_end_is_the_first_still_to_come() -> None:
    ledger = SearchBackoffLedger(CONSOLIDATE)
    assert ledger.next_rest_end(NOW_S) is None
    ledger.record(NOW_S, [failed(), failed("q")])
    ledger.record(NOW_S + 10, [failed("q")])  # q: its second failure (60 s), before its rest ended
    assert ledger.next_rest_end(NOW_S) == NOW_S + 30  # p's
    assert ledger.next_rest_end(NOW_S + 30) == NOW_S + 70  # p's has ended: q's
    assert ledger.next_rest_end(NOW_S + 70) is None


def test_a_search_that_finds_victims_ends_the_streak() -> None:
    ledger = SearchBackoffLedger(CONSOLIDATE)
    ledger.record(NOW_S, [failed(), failed("q")])
    ledger.record(NOW_S + 30, [failed()])  # the second in a row: 60 s
    ledger.record(NOW_S + 90, [SearchOutcome("consolidate", "p", found=True), failed("q")])
    assert rest_of(ledger, NOW_S + 90) is None
    ledger.record(NOW_S + 90, [failed()])  # later in the same cycle: a new streak, not the third
    assert rest_of(ledger, NOW_S + 90) == Rest(NOW_S + 120, 1)
    # q's streak goes on: its rest ended 60 s before, less than the maximum
    assert rest_of(ledger, NOW_S + 90, "q") == Rest(NOW_S + 150, 2)


def test_a_streak_is_forgotten_once_the_maximum_has_passed_after_its_rest() -> None:
    ledger = SearchBackoffLedger(CONSOLIDATE)
    ledger.record(NOW_S, [failed()])  # rests until +30
    ledger.view(NOW_S + 129)  # 99 s after its rest: remembered
    ledger.record(NOW_S + 129, [failed()])
    assert rest_of(ledger, NOW_S + 129) == Rest(NOW_S + 189, 2)
    ledger.view(NOW_S + 289)  # 100 s after that rest ended (the maximum): forgotten
    ledger.record(NOW_S + 289, [failed()])
    assert rest_of(ledger, NOW_S + 289) == Rest(NOW_S + 319, 1)


def test_an_action_without_a_backoff_records_nothing_and_actions_keep_their_own_streaks() -> None:
    ledger = SearchBackoffLedger(dataclasses.replace(CONSOLIDATE, reclaim_min_s=10))
    ledger.record(NOW_S, [failed(action="preempt"), failed(action="reclaim"), failed()])
    view = ledger.view(NOW_S)
    assert view is not None
    assert {action: dict(jobs) for action, jobs in view.jobs.items()} == {
        "consolidate": {"p": Rest(NOW_S + 30, 1)},
        "reclaim": {"p": Rest(NOW_S + 10, 1)},  # no maximum given: the minimum
    }
    assert ledger.resting_counts(NOW_S + 20) == {"consolidate": 1}
    ledger.clear()
    assert ledger.view(NOW_S) is None and ledger.resting_counts(NOW_S) == {}


def test_the_bounds_off_by_default_and_checked_naming_their_key() -> None:
    assert not SearchBackoff().enabled and SearchBackoff().bounds("consolidate") is None
    assert SearchBackoff(preempt_min_s=5, preempt_max_s=1).bounds("preempt") == (5, 5)  # max >= min
    assert SearchBackoff(reclaim_max_s=60).bounds("reclaim") is None  # no minimum: off
    assert SearchBackoff().bounds("allocate") is None
    assert SearchBackoff(consolidate_min_s=-1, preempt_max_s=math.nan).problems() == [
        ("consolidate_min", "must be >= 0 seconds, got -1"),
        ("preempt_max", "must be >= 0 seconds, got nan"),
    ]


# -- a cycle ---------------------------------------------------------------------------------------


def fragmented() -> Cluster:
    """Two 2-GPU nodes with one GPU busy each, and a pending 2-GPU job: consolidation moves r2-0."""
    nodes = tuple(Node(f"node-{i}", {"gpu": 2000}, {"gpu": 2000}) for i in range(2))
    jobs = (
        Job("r1", (Task("r1-0", "r1", {"gpu": 1000}, TaskStatus.RUNNING, "node-0"),)),
        Job("r2", (Task("r2-0", "r2", {"gpu": 1000}, TaskStatus.RUNNING, "node-1"),)),
        Job("p", (Task("p-0", "p", {"gpu": 2000}),)),
    )
    return Cluster(nodes, jobs, config=SchedulerConfig(actions=("allocate", "consolidate")))


def resting(cluster: Cluster, resting: RestingSearches | None) -> Cluster:
    return dataclasses.replace(cluster, config=dataclasses.replace(cluster.config, resting_searches=resting))


def test_a_cycle_records_each_search_and_whether_it_found_victims() -> None:
    plan = run_cycle(fragmented(), NOW_S)
    assert [d.kind for d in plan.decisions if d.task == "r2-0"] == ["move"]
    assert plan.searches == (SearchOutcome("consolidate", "p", found=True),)
    stuck = dataclasses.replace(fragmented(), nodes=(Node("node-0", {"gpu": 2000}, {"gpu": 2000}),))
    stuck = dataclasses.replace(stuck, jobs=(stuck.jobs[0], stuck.jobs[2]))  # r1 has nowhere to go
    stuck_plan = run_cycle(stuck, NOW_S)
    assert stuck_plan.decisions == []
    assert stuck_plan.explanations["p-0"].reason == "consolidate: no victim set lets it fit"
    assert stuck_plan.searches == (SearchOutcome("consolidate", "p", found=False),)


@pytest.mark.parametrize("failures", [1, 3])
def test_a_resting_job_is_not_searched_and_its_tasks_say_why(failures: int) -> None:
    rest = RestingSearches({"consolidate": {"p": Rest(NOW_S + 45, failures)}})
    plan = run_cycle(resting(fragmented(), rest), NOW_S)
    assert not any(d.kind == "move" for d in plan.decisions) and plan.searches == ()
    failed_searches = "1 failed search" if failures == 1 else "3 failed searches in a row"
    assert plan.explanations["p-0"].reason == (
        f"consolidate: not searched until 45 s from now (failed-search backoff after {failed_searches})"
    )


def test_a_rest_in_another_action_or_of_another_job_changes_nothing() -> None:
    expected = run_cycle(fragmented(), NOW_S).decisions
    for rest in (
        RestingSearches({"reclaim": {"p": Rest(NOW_S + 45, 1)}}),
        RestingSearches({"consolidate": {"q": Rest(NOW_S + 45, 1)}}),
    ):
        assert run_cycle(resting(fragmented(), rest), NOW_S).decisions == expected


def test_a_resting_job_keeps_that_reason_whatever_the_later_actions_say() -> None:
    """Preempt looks at p after consolidate left it out, and fails (evicting r1, the only lower-priority
    task, frees one GPU of two); the first action's reason stands, as it does task by task."""
    nodes = tuple(Node(f"node-{i}", {"gpu": 2000}, {"gpu": 2000}) for i in range(2))
    jobs = (
        Job("r0", (Task("r0-0", "r0", {"gpu": 1000}, TaskStatus.RUNNING, "node-0"),), priority=90),
        Job("r1", (Task("r1-0", "r1", {"gpu": 1000}, TaskStatus.RUNNING, "node-0"),), priority=10),
        Job("r2", (Task("r2-0", "r2", {"gpu": 1000}, TaskStatus.RUNNING, "node-1"),)),
        Job("p", (Task("p-0", "p", {"gpu": 2000}),)),
    )
    rest = RestingSearches({"consolidate": {"p": Rest(NOW_S + 45, 2)}})
    cluster = Cluster(nodes, jobs, config=SchedulerConfig(resting_searches=rest))  # every action
    plan = run_cycle(cluster, NOW_S)
    assert plan.decisions == []
    assert plan.explanations["p-0"].reason == (
        "consolidate: not searched until 45 s from now "
        "(failed-search backoff after 2 failed searches in a row)"
    )
    unrested = run_cycle(dataclasses.replace(cluster, config=SchedulerConfig()), NOW_S)
    assert unrested.explanations["p-0"].reason == "consolidate: no victim set lets it fit"
    assert unrested.searches == (
        SearchOutcome("consolidate", "p", found=False),
        SearchOutcome("preempt", "p", found=False),
    )
