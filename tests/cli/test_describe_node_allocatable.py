"""``describe node`` shows both capacity figures: the allocatable every task sees and, when the node
declares overcommit factors, what work that opted in sees (allocatable x factor)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from loadmaster.cli.views.describe import describe_view
from tests.cli.views import render

NOW = datetime(2026, 11, 21, 11, tzinfo=UTC)


def _node(spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": "worker-01"}, "spec": spec, "status": status}


def test_a_node_with_overcommit_shows_allocatable_and_allocatable_times_factor() -> None:
    spec = {"capacity": {"cpu": 8, "memory": "32Gi"}, "overcommit": {"cpu": 1.5, "memory": 1.0}}
    text = render(describe_view(_node(spec, {"allocatable": {"cpu": 7, "memory": "30Gi"}}), NOW))
    assert "Allocatable: cpu 7, memory 30Gi" in text
    assert "Overcommit:  cpu 10500m (x1.5), memory 30Gi for work that opts in (overcommit: true)" in text


def test_a_node_without_a_factor_above_one_shows_allocatable_only() -> None:
    spec = {"capacity": {"cpu": 8, "memory": "32Gi"}, "system_reserved": {"cpu": 1}, "overcommit": {"cpu": 1}}
    text = render(describe_view(_node(spec, {}), NOW))
    assert "Allocatable: cpu 7, memory 32Gi" in text  # capacity - system_reserved: the agent said nothing
    assert "Overcommit:" not in text


def test_only_nodes_get_the_capacity_lines() -> None:
    job = {"kind": "Job", "metadata": {"name": "train"}, "spec": {"tasks": 1, "command": ["run"]}}
    assert "Allocatable:" not in render(describe_view(job, NOW))
