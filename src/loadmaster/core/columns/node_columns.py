"""Per-node facts of a snapshot, reused from the previous cycle when its nodes are the very same objects.

The control plane's nodes change rarely between cycles (a heartbeat keeps the same ``Node`` object:
``runtime/model_entries.py``), so the name order, the index, the readiness and cordon columns and the
label, taint and volume-pool indexes are built once and reused while every node is the same
(immutable) object, in the same order. All of them are read-only once built.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import is_

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.labels import LabelIndex
from loadmaster.core.columns.taints import TaintIndex
from loadmaster.core.columns.volumes import PoolIndex
from loadmaster.core.model import Node


@dataclass(frozen=True, slots=True)
class NodeColumns:
    given: tuple[Node, ...]  # the cluster's nodes as given (what a later cycle is compared with)
    nodes: tuple[Node, ...]  # sorted by name: ties go to the first name = numpy's first argmax
    names: tuple[str, ...]
    index: dict[str, int]
    resources: frozenset[str]  # every resource some node has
    ready: npt.NDArray[np.bool_]
    unschedulable: npt.NDArray[np.bool_]
    labels: LabelIndex
    taints: TaintIndex
    pools: PoolIndex


def node_columns(given: tuple[Node, ...], previous: NodeColumns | None = None) -> NodeColumns:
    if previous is not None and len(previous.given) == len(given) and all(map(is_, previous.given, given)):
        return previous
    nodes = tuple(sorted(given, key=lambda node: node.name))
    names = tuple(node.name for node in nodes)
    ready = np.array([node.state == "Ready" for node in nodes], dtype=np.bool_)
    unschedulable = np.array([node.unschedulable for node in nodes], dtype=np.bool_)
    ready.flags.writeable = unschedulable.flags.writeable = False
    return NodeColumns(
        given,
        nodes,
        names,
        dict(zip(names, range(len(names)), strict=True)),
        frozenset().union(*(node.allocatable for node in nodes)),
        ready,
        unschedulable,
        LabelIndex([node.labels for node in nodes]),
        TaintIndex(nodes),
        PoolIndex(nodes),
    )
