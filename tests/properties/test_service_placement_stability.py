"""Service placement is stable and even (issue 14; seed conflict 4; seed-capabilities (e) 3).

Safety: a node joining moves no placed replica; a node leaving moves only its own replicas. Evenness:
``spread`` keeps a service's replica counts over its eligible nodes within 1 of each other when every
replica fits, whether placed in one cycle or in several. Each property goes through ``run_cycle``, the
scheduler's one entry point, with every action on.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.cycle import run_cycle

ROOMY = {"cpu": 64_000, "memory": 256 * 2**30}  # every replica fits: evenness is the only question
REQUEST = {"cpu": 100, "memory": 2**20}
PROFILES = st.sampled_from(["service_spread", "service_pack"])


def _nodes(names: list[str]) -> tuple[Node, ...]:
    return tuple(Node(name, ROOMY, ROOMY) for name in sorted(names))


def _service(name: str, replicas: int, profile: str, placed: dict[str, str]) -> list[Job]:
    """A service as the control plane builds it (service_jobs.py): one job of its placed replicas and one
    single-task job per waiting replica, all with the service's name."""
    tasks = [
        Task(f"{name}-{i}", name, REQUEST)
        if f"{name}-{i}" not in placed
        else Task(f"{name}-{i}", name, REQUEST, status=TaskStatus.RUNNING, node=placed[f"{name}-{i}"])
        for i in range(replicas)
    ]
    holding = tuple(task for task in tasks if task.node is not None)
    jobs = [Job(name, holding, profile=profile)] if holding else []
    return jobs + [Job(name, (task,), profile=profile) for task in tasks if task.node is None]


def _place(
    nodes: list[str], services: dict[str, int], profile: str, placed: dict[str, str]
) -> dict[str, str]:
    """One cycle: every replica of ``services`` not in ``placed`` is placed; returns where each one is,
    and fails the test if a placed replica was evicted or moved."""
    jobs = tuple(
        job for name, count in sorted(services.items()) for job in _service(name, count, profile, placed)
    )
    plan = run_cycle(Cluster(_nodes(nodes), jobs), 0.0)
    disturbed = [d for d in plan.decisions if d.task in placed]
    assert disturbed == [], disturbed
    after = dict(placed)
    after.update({d.task: d.node for d in plan.decisions if d.kind == "bind"})
    return after


def _skew(placed: dict[str, str], service: str, nodes: list[str]) -> int:
    counts = Counter(node for name, node in placed.items() if name.rsplit("-", 1)[0] == service)
    per_node = [counts.get(node, 0) for node in nodes]
    return max(per_node) - min(per_node)


services_st = st.dictionaries(st.sampled_from(["web", "api", "db"]), st.integers(1, 25), min_size=1)


@given(st.integers(1, 8), services_st, PROFILES)
def test_a_node_joining_moves_no_placed_replica(n_nodes: int, services: dict[str, int], profile: str) -> None:
    nodes = [f"n{i}" for i in range(n_nodes)]
    placed = _place(nodes, services, profile, {})
    again = _place([*nodes, "new"], services, profile, placed)  # asserts nothing placed was disturbed
    assert again == placed


@given(st.integers(1, 8), services_st, PROFILES, st.data())
def test_a_new_replica_after_a_node_joined_goes_where_there_are_fewest(
    n_nodes: int, services: dict[str, int], profile: str, data: st.DataObject
) -> None:
    """The joined node holds nothing, so the new replica goes to a node holding none: of its service
    (spread) or of any service (pack); ``new`` itself when every other node holds some."""
    nodes = [f"n{i}" for i in range(n_nodes)]
    placed = _place(nodes, services, profile, {})
    service = data.draw(st.sampled_from(sorted(services)))
    grown = {**services, service: services[service] + 1}
    after = _place([*nodes, "new"], grown, profile, placed)
    assert {k: v for k, v in after.items() if k in placed} == placed
    counted = (
        placed if profile == "service_pack" else {k: v for k, v in placed.items() if k.startswith(service)}
    )
    target = after[f"{service}-{services[service]}"]
    assert target not in counted.values()
    if set(counted.values()) == set(nodes):
        assert target == "new"


@given(st.integers(2, 8), services_st, PROFILES, st.data())
def test_a_node_leaving_moves_only_its_own_replicas(
    n_nodes: int, services: dict[str, int], profile: str, data: st.DataObject
) -> None:
    nodes = [f"n{i}" for i in range(n_nodes)]
    placed = _place(nodes, services, profile, {})
    gone = data.draw(st.sampled_from(nodes))
    staying = {name: node for name, node in placed.items() if node != gone}
    remaining = [node for node in nodes if node != gone]
    after = _place(remaining, services, profile, staying)
    moved = {name for name in placed if after[name] != placed[name]}
    assert moved == {name for name, node in placed.items() if node == gone}
    if profile == "service_spread":
        assert all(_skew(after, service, remaining) <= 1 for service in services)


@given(st.integers(1, 8), services_st, st.lists(st.integers(1, 10), min_size=1, max_size=4))
def test_spread_keeps_each_services_skew_within_one_over_cycles(
    n_nodes: int, services: dict[str, int], batches: list[int]
) -> None:
    nodes = [f"n{i}" for i in range(n_nodes)]
    placed = _place(nodes, services, "service_spread", {})
    assert all(_skew(placed, service, nodes) <= 1 for service in services)
    grown = dict(services)
    for batch in batches:  # scale-ups in later cycles
        grown = {service: count + batch for service, count in grown.items()}
        placed = _place(nodes, grown, "service_spread", placed)
        assert all(_skew(placed, service, nodes) <= 1 for service in grown)


def test_spread_skew_counts_only_the_eligible_nodes() -> None:
    """A cordoned node is not eligible: its zero replicas do not hold the others back."""
    nodes = ["n0", "n1", "n2"]
    cluster_nodes = tuple(
        dataclasses.replace(node, unschedulable=node.name == "n2") for node in _nodes(nodes)
    )
    plan = run_cycle(Cluster(cluster_nodes, tuple(_service("web", 6, "service_spread", {}))), 0.0)
    assert Counter(d.node for d in plan.decisions) == {"n0": 3, "n1": 3}
