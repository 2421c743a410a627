"""Consistency of the tasks already bound to nodes: no node over-committed by them.

For every node n and resource r:
    sum of request_r(t) over tasks t Running or Releasing on n  <=  allocatable_r(n)
(a resource missing from allocatable is 0 there). A violation names the node's path ``nodes[i]``,
the resource and both amounts; with several, the first node in file order and, on it, the first
resource in name order.
"""

from __future__ import annotations

from loadmaster.core.model import Job, Node
from loadmaster.core.resources import format_quantity
from loadmaster.scenario.errors import ScenarioError


def check_not_over_committed(nodes: tuple[Node, ...], jobs: tuple[Job, ...], path: str = "nodes") -> None:
    # Tasks carry a node only when Running or Releasing (tasks.py), so a node set means "bound".
    used: dict[str, dict[str, int]] = {}
    for job in jobs:
        for task in job.tasks:
            if task.node is None or not task.request:
                continue
            on_node = used.get(task.node)
            if on_node is None:
                used[task.node] = dict(task.request)
                continue
            for resource, amount in task.request.items():
                on_node[resource] = on_node.get(resource, 0) + amount
    for index, node in enumerate(nodes):
        on_node = used.get(node.name)
        if on_node is None:
            continue
        for resource in sorted(on_node):
            requested, allocatable = on_node[resource], node.allocatable.get(resource, 0)
            if requested > allocatable:
                shown_requested = format_quantity(resource, requested)
                shown_allocatable = format_quantity(resource, allocatable)
                raise ScenarioError(
                    f"{path}[{index}]",
                    f"over-committed by its Running and Releasing tasks: {resource} requested "
                    f"{shown_requested} > allocatable {shown_allocatable}",
                )
