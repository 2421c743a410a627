"""``get nodes -o wide``'s GPU columns: the largest GPU request each node could take now and its GPUs
fragmented for the shapes of the replicas listed."""

from __future__ import annotations

from datetime import UTC, datetime

from loadmaster.cli.views.columns import TableContext, build_table
from loadmaster.cli.views.gpu_fragmentation import gpu_fragmentation_by_node
from loadmaster.cli.views.kind_columns import NODE_COLUMNS
from tests.cli.views import node, render, replica, rows

NOW = datetime(2026, 11, 21, 11, 0, 0, tzinfo=UTC)


def gpu_columns(nodes: list[dict[str, object]], replicas: list[dict[str, object]]) -> list[list[str]]:
    context = TableContext(now=NOW, replicas=replicas, gpu=gpu_fragmentation_by_node(nodes, replicas, NOW))
    table = rows(render(build_table(NODE_COLUMNS, nodes, context, wide=True)))
    header = table[0]
    at = header.index("GPU-LARGEST")
    return [[line[0], *line[at : at + 2]] for line in table]


def test_the_wide_nodes_table_shows_each_gpu_nodes_largest_request_and_fragmented_gpus() -> None:
    nodes = [
        node("cpu", {"cpu": 8, "memory": "32Gi"}),
        node("g1", {"cpu": 16, "memory": "64Gi", "gpu": 2}),
        node("g2", {"cpu": 16, "memory": "64Gi", "gpu": 2}, unschedulable=True),
    ]
    replicas = [
        replica("infer-0", "Running", "g1", {"cpu": 1, "memory": "1Gi"}, gpus=0.6),
        replica("infer-1", "Pending", None, {"cpu": 1, "memory": "1Gi"}, gpus=0.6),
        replica("done", "Terminated", "g2", {"cpu": 1, "memory": "1Gi"}, gpus=1),
    ]
    # shapes: 0.6 GPU (both infer replicas); g1 has 0.4 left on one device (a fragment) and one free
    assert gpu_columns(nodes, replicas) == [
        ["NAME", "GPU-LARGEST", "GPU-FRAG"],
        ["cpu", "-", "-"],
        ["g1", "1", "0.4"],
        ["g2", "0", "0"],  # cordoned: takes nothing now, though nothing on it is fragmented
    ]


def test_without_gpu_nodes_the_gpu_columns_are_dashes() -> None:
    nodes = [node("cpu", {"cpu": 8, "memory": "32Gi"})]
    assert gpu_columns(nodes, []) == [["NAME", "GPU-LARGEST", "GPU-FRAG"], ["cpu", "-", "-"]]
