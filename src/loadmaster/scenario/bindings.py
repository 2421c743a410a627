"""Consistency of the tasks already bound to nodes: no node over-committed by them.

For every node n and resource r, with the tasks t Running or Releasing on n:
    sum of request_r(t) over the tasks not opted in to overcommit  <=  allocatable_r(n)
    sum of request_r(t) over all of them  <=  floor(allocatable_r(n) x overcommit_r(n))
(a resource missing from allocatable is 0 there; a missing factor is 1). Both hold for every state the
scheduler can reach: a task that did not opt in is placed only while the whole node stays within
allocatable, an opted-in one while it stays within allocatable x factor. A violation names the node's
path ``nodes[i]``, the resource and both amounts; with several, the first node in file order and, on
it, the first resource in name order (the plain bound before the overcommitted one).
"""

from __future__ import annotations

from loadmaster.core.model import Job, Node
from loadmaster.core.overcommit import overcommitted_amount
from loadmaster.core.resources import format_quantity
from loadmaster.scenario.errors import ScenarioError

Usage = dict[str, dict[str, int]]  # node -> resource -> requested


def _add(used: Usage, node: str, request: dict[str, int]) -> None:
    on_node = used.get(node)
    if on_node is None:
        used[node] = dict(request)
        return
    for resource, amount in request.items():
        on_node[resource] = on_node.get(resource, 0) + amount


def check_not_over_committed(nodes: tuple[Node, ...], jobs: tuple[Job, ...], path: str = "nodes") -> None:
    # Tasks carry a node only when Running or Releasing (tasks.py), so a node set means "bound".
    plain: Usage = {}  # tasks not opted in
    total: Usage = {}  # every task
    for job in jobs:
        for task in job.tasks:
            if task.node is None or not task.request:
                continue
            _add(total, task.node, task.request)
            if not task.overcommit:
                _add(plain, task.node, task.request)
    for index, node in enumerate(nodes):
        for resource in sorted(total.get(node.name, {})):
            allocatable = node.allocatable.get(resource, 0)
            factor = node.overcommit.get(resource, 1.0)
            bounds = (
                (plain.get(node.name, {}).get(resource, 0), allocatable, ""),
                (
                    total[node.name][resource],
                    overcommitted_amount(allocatable, factor),
                    f" x overcommit {factor:g} =" if factor != 1 else "",
                ),
            )
            for requested, bound, times in bounds:
                if requested > bound:
                    raise ScenarioError(
                        f"{path}[{index}]",
                        f"over-committed by its Running and Releasing tasks: {resource} requested "
                        f"{format_quantity(resource, requested)} > allocatable{times} "
                        f"{format_quantity(resource, bound)}",
                    )
