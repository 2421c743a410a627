"""Consolidate skips the search of a job whose first task fits nowhere once the cycle's moves budget is
spent (actions/consolidate.py): a cycle decides and explains the same as with every search played."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import event, given, settings
from hypothesis import strategies as st

from loadmaster.actions import consolidate as consolidate_module
from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task
from loadmaster.cycle import CyclePlan, run_cycle
from tests.properties.strategies import assert_same_cycle, running_jobs

SHAPES = ({"cpu": 1000}, {"cpu": 2000, "memory": 2**30}, {"cpu": 3000}, {"cpu": 500, "memory": 2**29})


@st.composite
def fragmented(draw: st.DrawFn) -> Cluster:
    """Nodes partly filled by running elastic jobs (room left in fragments), and pending jobs, some
    larger than any fragment: consolidation has moves to make and a small budget to make them in."""
    nodes = [
        Node(f"node-{i}", alloc, alloc)
        for i, alloc in enumerate(
            {"cpu": draw(st.integers(2, 6)) * 1000, "memory": 8 * 2**30}
            for _ in range(draw(st.integers(2, 4)))
        )
    ]
    jobs = running_jobs(draw, nodes, SHAPES, jobs=4, tasks=4)
    for j in range(draw(st.integers(1, 6))):  # pending jobs
        shape = draw(st.sampled_from(SHAPES))
        size = draw(st.integers(1, 3))
        tasks = tuple(Task(f"wait-{j}-{k}", f"wait-{j}", dict(shape)) for k in range(size))
        jobs.append(Job(f"wait-{j}", tasks, min_available=draw(st.integers(1, size))))
    config = SchedulerConfig(
        actions=("allocate", "consolidate"),
        max_consolidation_moves=draw(st.integers(0, 2)),
        backfill_depth=draw(st.sampled_from([None, 1])),
    )
    return Cluster(tuple(nodes), tuple(jobs), (), config)


def every_search_played(cluster: Cluster) -> CyclePlan:
    with patch.object(consolidate_module, "first_fits_nowhere", lambda session, tasks: False):
        return run_cycle(cluster)


@settings(max_examples=300)
@given(fragmented())
def test_a_cycle_decides_and_explains_the_same_with_searches_skipped_once_the_budget_is_spent(
    cluster: Cluster,
) -> None:
    skipped: list[bool] = []
    original = consolidate_module.first_fits_nowhere

    def counting(session, tasks):  # type: ignore[no-untyped-def]
        found = original(session, tasks)
        skipped.append(found)
        return found

    with patch.object(consolidate_module, "first_fits_nowhere", counting):
        fast = run_cycle(cluster)
    plain = every_search_played(cluster)
    event("a search was skipped" if any(skipped) else "no search skipped")
    event("moves made" if any(d.kind == "move" for d in plain.decisions) else "no move")
    assert_same_cycle(fast, plain)
