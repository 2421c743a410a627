"""Hints a person can act on: a change that would make the task fit, worded as a sentence; and the
phase message ordered for a person (the blocking filters first, then what the actions tried)."""

from __future__ import annotations

from loadmaster.core.model import Cluster, Job, Node, Taint, Task, TaskStatus
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


def test_a_port_hint_holds_when_the_port_is_freed_the_engine_then_places_the_task_there() -> None:
    # The "gpu-01 would fit once its port 80 in use": now a sentence, and checked.
    pinned = Task(
        "web-0", "web", {"cpu": 100}, TaskStatus.RUNNING, node="gpu-01", ports=(80,), hosts=("gpu-01",)
    )
    holder = Job("web", (pinned,))  # pinned: consolidation cannot move it away
    wanting = Job("new", (Task("new-0", "new", {"cpu": 100, "gpu": GPU}, ports=(80,)),))
    nodes = (_node("gpu-01", gpus=8), _node("cpu-01"))
    plan = run_cycle(Cluster(nodes, (holder, wanting)))
    assert plan.explanations["new-0"].hints == ["gpu-01 would fit once its host port 80 is free"]
    freed = run_cycle(Cluster(nodes, (wanting,)))
    assert freed.tasks["new-0"].node == "gpu-01"


def test_no_capacity_hint_for_a_task_larger_than_the_nodes_cpu_even_with_them_empty() -> None:
    holder = Job("old", (Task("old-0", "old", {"cpu": 500}, TaskStatus.RUNNING, node="n1"),))
    wanting = Job("want", (Task("want-0", "want", {"cpu": 2000}),))
    plan = run_cycle(Cluster((_node("n1", cpu=1000),), (holder, wanting)))
    assert plan.explanations["want-0"].summary == {"capacity": 1}
    assert plan.explanations["want-0"].hints == []  # freeing all of n1 leaves 1 cpu for 2


def test_a_capacity_hint_names_every_change_it_needs_cpu_and_gpu_devices() -> None:
    gpus = Job(
        "gpus", (Task("gpus-0", "gpus", {"cpu": 1000, "gpu": 8 * GPU}, TaskStatus.RUNNING, node="g1"),)
    )
    wanting = Job("want", (Task("want-0", "want", {"cpu": 8000, "gpu": 2 * GPU}),))
    plan = run_cycle(Cluster((_node("g1", gpus=8),), (gpus, wanting)))
    # cpu alone would not do (its devices are all taken): the hint says both, and both together fit
    assert plan.explanations["want-0"].hints == ["needs 1 less cpu and GPU devices freed to fit g1"]


def test_a_task_larger_than_every_node_in_gpus_gets_no_hint_even_with_the_nodes_empty() -> None:
    big = Job("big", (Task("big-0", "big", {"cpu": 1000, "gpu": 16 * GPU}),))
    plan = run_cycle(Cluster((_node("g1", gpus=8),), (big,)))
    assert plan.explanations["big-0"].summary == {"capacity": 1}
    assert plan.explanations["big-0"].hints == []


def test_a_taint_hint_is_given_only_where_removing_the_taint_lets_the_task_fit() -> None:
    tainted = Node("t1", {"cpu": 8000}, {"cpu": 8000}, taints=(Taint("dedicated", "ml", "NoSchedule"),))
    small = Node("s1", {"cpu": 1000}, {"cpu": 1000}, taints=(Taint("dedicated", "ml", "NoSchedule"),))
    wanting = Job("want", (Task("want-0", "want", {"cpu": 2000}),))
    plan = run_cycle(Cluster((tainted, small), (wanting,)))
    # s1 fails twice (taint and capacity): no hint names it; t1 fails on its taint alone
    assert plan.explanations["want-0"].hints == [
        "t1 would fit if not for: untolerated taint dedicated=ml:NoSchedule"
    ]


def test_a_missing_label_hint_needs_a_node_that_would_then_fit() -> None:
    wanting = Job("want", (Task("want-0", "want", {"cpu": 4000}, node_selector={"zone": "x"}),))
    too_small = run_cycle(Cluster((_node("n1", cpu=2000),), (wanting,)))
    assert too_small.explanations["want-0"].hints == []  # labelling n1 zone=x would not make 4 cpus fit
    big_enough = run_cycle(Cluster((_node("n1"),), (wanting,)))
    assert big_enough.explanations["want-0"].hints[0] == "no node has label zone=x"
