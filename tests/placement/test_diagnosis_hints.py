"""Hints a person can act on: a change that would make the task fit, worded as a sentence; and the
phase message ordered for a person (the blocking filters first, then what the actions tried)."""

from __future__ import annotations

from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.cycle import run_cycle
from loadmaster.placement.diagnosis import Explanation
from loadmaster.runtime.plane.phase_condition import explanation_message

GPU = 1000  # canonical units per device


def _node(name: str, gpus: int = 0, cpu: int = 8000) -> Node:
    capacity = {"cpu": cpu, "memory": 2**34, "gpu": gpus * GPU}
    return Node(name, capacity, dict(capacity))


def test_no_capacity_hint_for_a_task_larger_than_any_node() -> None:
    big = Job("big", (Task("big-0", "big", {"cpu": 1000, "gpu": 16 * GPU}),))
    plan = run_cycle(Cluster((_node("g1", gpus=8), _node("g2", gpus=8)), (big,)))
    explanation = plan.explanations["big-0"]
    assert explanation.summary == {"capacity": 2}
    assert explanation.hints == []  # freeing GPUs on an 8-GPU node never fits 16


def test_a_capacity_hint_names_a_node_that_would_hold_the_task_once_freed() -> None:
    holder = Job("holder", (Task("holder-0", "holder", {"cpu": 6000}, TaskStatus.RUNNING, node="n1"),))
    wanting = Job("want", (Task("want-0", "want", {"cpu": 4000}),))
    plan = run_cycle(Cluster((_node("n1"), _node("tiny", cpu=2000)), (holder, wanting)))
    hints = plan.explanations["want-0"].hints
    assert hints == ["needs 2 less cpu to fit n1"]  # not "tiny": its whole 2 cores never hold 4


def test_a_port_hint_is_a_sentence() -> None:
    holder = Job("web", (Task("web-0", "web", {"cpu": 100}, TaskStatus.RUNNING, node="n1", ports=(80,)),))
    wanting = Job("new", (Task("new-0", "new", {"cpu": 100}, ports=(80,)),))
    plan = run_cycle(Cluster((_node("n1"),), (holder, wanting)))
    assert plan.explanations["new-0"].hints == ["n1 would fit once its host port 80 is free"]


def test_the_message_puts_the_blocking_filters_before_what_the_actions_tried() -> None:
    some_fit = Explanation({"selector": 2}, {}, [], "reclaim: no victim set lets it fit")
    assert explanation_message(some_fit, 3) == (
        "1/3 nodes can take it: 2 selector; then reclaim: no victim set lets it fit"
    )


def test_an_actions_account_is_left_out_when_no_node_passes_the_filters() -> None:
    none_fit = Explanation({"selector": 3}, {}, [], "consolidate: no victim set lets it fit")
    assert explanation_message(none_fit, 3) == "0/3 nodes can take it: 3 selector"
    quota = Explanation({"selector": 3}, {}, [], "queue a would exceed its cpu limit")
    assert (
        explanation_message(quota, 3)
        == "0/3 nodes can take it: 3 selector; then queue a would exceed its cpu limit"
    )
