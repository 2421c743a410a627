"""Live queue fairness: ``GET /api/queue-state``, the per-queue gauges of ``/metrics``, and the fixed
label values of ``loadmaster_failures_total``."""

from __future__ import annotations

import pytest

from loadmaster.runtime.scheduling.cycle_writes import failure_label
from loadmaster.runtime.scheduling.explaining.queue_state import last_reclaims
from tests.api.conftest import Api

pytestmark = pytest.mark.anyio

QUEUES_AND_JOB = """
api_version: loadmaster/v1
kind: Queue
metadata: {name: research}
spec: {deserved: {cpu: "4"}, limit: {cpu: "6"}}
---
api_version: loadmaster/v1
kind: Queue
metadata: {name: team-a}
spec: {parent: research, deserved: {cpu: "2"}, over_quota_weight: 2}
---
api_version: loadmaster/v1
kind: Queue
metadata: {name: team-b}
spec: {parent: research, deserved: {cpu: "2"}}
---
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec: {queue: team-a, tasks: 3, command: [x], resources: {cpu: "1", memory: 64Mi}}
"""


async def test_queue_state_shows_what_each_queue_holds_deserves_and_may_keep(api: Api) -> None:
    await api.register("n1", cpu="8", memory="8Gi")
    await api.apply(QUEUES_AND_JOB)
    await api.wait_phases({f"train-{i}": "Scheduled" for i in range(3)})
    state = (await api.user.get("/api/queue-state")).json()
    team_a, team_b = state["queues"]["team-a"], state["queues"]["team-b"]
    assert team_a["allocated"]["cpu"] == 3
    assert team_a["deserved"] == {"cpu": 2}
    assert team_a["over_quota_weight"] == 2
    assert team_a["siblings"] == ["team-b"] and team_b["siblings"] == ["team-a"]
    assert team_b["allocated"]["cpu"] == 0 and team_b["dominant_share"] == 0
    # team-a holds 3 cores; what it may keep is min(limit, max(deserved, fair share)) > 0, so the
    # dominant share is 3 divided by that, and the fair share covers what it asked for (team-b asks none)
    assert team_a["fair_share"]["cpu"] == 3 and team_a["dominant_share"] == 1.0
    assert state["queues"]["research"]["limit"] == {"cpu": 6}
    assert team_a["last_reclaim"] is None


async def test_metrics_export_each_queues_figures_per_resource_after_a_cycle(api: Api) -> None:
    await api.register("n1", cpu="8", memory="8Gi")
    await api.apply(QUEUES_AND_JOB)
    await api.wait_phases({f"train-{i}": "Scheduled" for i in range(3)})
    metrics = (await api.anonymous.get("/metrics")).text
    assert 'loadmaster_queue_allocated{queue="team-a",resource="cpu"} 3.0' in metrics
    assert 'loadmaster_queue_deserved{queue="team-b",resource="cpu"} 2.0' in metrics
    assert 'loadmaster_queue_limit{queue="research",resource="cpu"} 6.0' in metrics
    assert 'loadmaster_queue_limit{queue="team-a"' not in metrics  # no limit set: absent, not 0
    assert 'loadmaster_queue_dominant_share{queue="team-b"} 0.0' in metrics


def test_the_last_reclaim_of_a_queue_is_its_newest_eviction_by_reclaim() -> None:
    def evict(seq: int, action: str, queue: str) -> dict[str, object]:
        details = {"action": action, "node": "n1", "queue": queue}
        message = f"evicted from n1 by {action}: for team-b"
        return {
            "seq": seq,
            "time": f"t{seq}",
            "object": f"replicas/r{seq}",
            "message": message,
            "details": details,
        }

    newest = last_reclaims(
        [evict(1, "reclaim", "team-a"), evict(2, "preempt", "team-a"), evict(3, "reclaim", "team-a")]
    )
    assert newest == {
        "team-a": {
            "at": "t3",
            "replica": "r3",
            "node": "n1",
            "message": "evicted from n1 by reclaim: for team-b",
        }
    }


@pytest.mark.parametrize(
    ("reason", "label"),
    [
        pytest.param("reclaim: no victim set lets it fit", "reclaim", id="an-action"),
        pytest.param("consolidate: no victim set lets it fit (gang)", "consolidate", id="another-action"),
        pytest.param("queue team-a would exceed its gpu limit", "queue_limit", id="a-queue-limit"),
        pytest.param("gang train needs 4 more tasks placed together", "gang", id="a-gang"),
        pytest.param("something: new", "other", id="anything-else"),
        pytest.param("", "other", id="nothing"),
    ],
)
def test_a_failure_reason_becomes_one_of_a_fixed_set_of_label_values(reason: str, label: str) -> None:
    assert failure_label(reason) == label
