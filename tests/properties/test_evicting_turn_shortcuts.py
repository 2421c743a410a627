"""The evicting actions' shortcuts (actions/evicting_action.py) are exact: a job's turn that can change
nothing (every task already explained, no candidate victim) skips its pre-checks, and the cluster's total
free room is summed once per state, not once per job; a cycle decides and explains the same with them
as with every turn played in full."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import event, given, settings
from hypothesis import strategies as st

from loadmaster.actions import evicting_action
from loadmaster.actions.victims.fit import total_free_room
from loadmaster.core.model import Cluster, Queue, SchedulerConfig
from loadmaster.cycle import CyclePlan, run_cycle
from tests.properties.strategies import assert_same_cycle, clusters


@st.composite
def contended(draw: st.DrawFn) -> Cluster:
    """Random clusters with two queues, priorities and running work, every evicting action on."""
    cluster = draw(clusters(max_nodes=4, max_jobs=8, with_queues=draw(st.booleans())))
    config = SchedulerConfig(
        actions=("allocate", "consolidate", "reclaim", "preempt"),
        max_consolidation_moves=draw(st.integers(0, 3)),
        backfill_depth=draw(st.sampled_from([None, 0, 2])),
    )
    queues: tuple[Queue, ...] = cluster.queues
    return Cluster(cluster.nodes, cluster.jobs, queues, config)


def every_turn_played(cluster: Cluster) -> CyclePlan:
    with (
        patch.object(evicting_action, "nothing_to_change", lambda *_: False),
        patch.object(evicting_action._TotalFreeRoom, "now", lambda self: total_free_room(self._session)),
    ):
        return run_cycle(cluster)


@settings(max_examples=300)
@given(contended())
def test_a_cycle_decides_and_explains_the_same_with_the_evicting_turns_cut_short(cluster: Cluster) -> None:
    cut: list[bool] = []
    original = evicting_action.nothing_to_change

    def counting(*args):  # type: ignore[no-untyped-def]
        found = original(*args)
        cut.append(found)
        return found

    with patch.object(evicting_action, "nothing_to_change", counting):
        fast = run_cycle(cluster)
    event("a turn was cut short" if any(cut) else "no turn was cut short")
    assert_same_cycle(fast, every_turn_played(cluster))
