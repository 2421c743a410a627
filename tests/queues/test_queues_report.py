"""The ``queues`` key of simulate's JSON."""

from __future__ import annotations

import json

import pytest

from loadmaster.queues import queues_report
from loadmaster.queues.report import user_amount

from .trees import per_queue, queue, report_of_two_teams, tree_of, usage_with


def test_the_report_shows_every_queue_in_user_units() -> None:
    report = report_of_two_teams()
    assert list(report) == ["dept", "team-a", "team-b"]
    assert report["team-a"] == {
        "parent": "dept",
        "priority": 1,
        "over_quota_weight": 1.0,
        "deserved": {"memory": 2**33, "gpu": 2},
        "limit": {},
        # dept gets 6 GPUs (deserved 4 + the 2 more its teams want, within its limit); team-a (priority 1)
        # gets its deserved 2 + the 3 more it wants; team-b (weight 0, no deserved) gets none.
        # cpu: 1.5 cores of 16, its whole demand.
        "fair_share": {"cpu": 1.5, "memory": 0, "gpu": 5},
        "allocated": {"cpu": 1.5, "memory": 0, "gpu": 3},
        "allocated_non_preemptible": {"cpu": 0, "memory": 0, "gpu": 0},
        "dominant_share": 1.0,  # cpu: 1.5 of 1.5; gpu: 3 of 5
        "requested": {"cpu": 1.5, "memory": 0, "gpu": 5},
    }
    assert report["dept"]["limit"] == {"gpu": 6}
    assert report["dept"]["allocated"] == {"cpu": 1.5, "memory": 0, "gpu": 4}
    assert report["team-b"]["allocated_non_preemptible"]["gpu"] == 1
    assert report["team-b"]["parent"] == "dept"


def test_the_report_is_plain_json() -> None:
    report = report_of_two_teams()
    assert json.loads(json.dumps(report)) == report


def test_dominant_share_is_against_the_larger_of_deserved_and_fair_share() -> None:
    tree = tree_of(queue("a", deserved={"gpu": 4}))
    usage = usage_with(tree, {"a": {"gpu": 2}})
    fair = per_queue(tree, {"a": {"gpu": 1}})
    assert queues_report(tree, fair, usage)["a"]["dominant_share"] == 0.5


def test_without_demand_the_report_has_no_requested_key() -> None:
    tree = tree_of(queue("a"))
    report = queues_report(tree, per_queue(tree, {}), usage_with(tree, {}))
    assert "requested" not in report["a"]


@pytest.mark.parametrize(
    ("resource", "amount", "shown"),
    [
        pytest.param("cpu", 1500, 1.5, id="cpu-millicores-to-cores"),
        pytest.param("gpu", 2000, 2, id="whole-gpus-are-ints"),
        pytest.param("gpu", 500, 0.5, id="gpu-fraction"),
        pytest.param("memory", 2**30, 2**30, id="memory-stays-bytes"),
        pytest.param("ingress_ip", 3000, 3, id="extended-resource-count"),
    ],
)
def test_user_amounts_divide_by_the_resources_scale(resource: str, amount: int, shown: float) -> None:
    value = user_amount(resource, amount)
    assert value == shown
    assert isinstance(value, int) == (amount % (1 if resource == "memory" else 1000) == 0)
