"""The input's GPU device layout carried from one snapshot to the next: only nodes whose tasks changed
are laid out again.

A node's layout (``device_layouts.py``) is a pure function of its device count and the ordered
``(request, releasing, stored devices)`` of its placed GPU tasks. Tasks are immutable, so when a node
holds the very same task objects in the same order as in the previous snapshot (of the same node
columns: the same nodes, the same device counts), its layout is the previous one: its device rows and
its tasks' records are taken as they were. A node is *unchanged* iff its task count is the same and the
i-th of its tasks (in input order) is the previous i-th; that is decided for every node at once on the
tasks' ``id``s (the carry keeps the previous tasks alive, so an ``id`` still names the same object).
The other nodes are laid out from the memoised layouts, as a snapshot without a carry lays out every
node. So the per-task Python work is paid for the nodes whose tasks changed, not for every placed task
of every cycle. A property test checks layouts and records equal those of a snapshot built from scratch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.device_layouts import Layout, LayoutKey, layout_of
from loadmaster.core.columns.task_columns import NO_NODE
from loadmaster.core.columns.task_record import BOUND, RELEASING, TaskRecord
from loadmaster.core.devices import DeviceState
from loadmaster.core.model import Task

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class CarriedLayout:
    """One snapshot's layout, its placed GPU tasks sorted by node (input order within a node)."""

    basis: object  # the node columns it was laid out on (compared by identity)
    tasks: tuple[Task, ...]  # kept alive so that ``ids`` keep naming these objects
    ids: npt.NDArray[np.uint64]  # [K] id() of each task, by node
    counts: IntArray  # [N] placed GPU tasks per node
    starts: IntArray  # [N + 1] where each node's tasks start in ``ids``
    records: tuple[TaskRecord, ...]  # [K] by node
    row_of: IntArray  # [N] a node's row in ``used`` and ``releasing`` (-1: it held no GPU task)
    used: IntArray  # [nodes with tasks, D] their device rows (copies: the cycle changes its own)
    releasing: IntArray


@dataclass(slots=True)
class DeviceLayoutCache:
    """``memo``: layouts by key (pure, so never stale); ``carried``: the last snapshot's layout."""

    memo: dict[LayoutKey, Layout] = field(default_factory=dict)
    carried: CarriedLayout | None = None


@dataclass(frozen=True, slots=True)
class PlacedGpuTasks:
    """The input's placed GPU tasks, in input order, with their columns."""

    index: IntArray  # [K] task indices, ascending
    node: IntArray  # [K]
    releasing: BoolArray  # [K]
    amount: IntArray  # [K] milli-GPU requested


def lay_out_devices(
    tasks: tuple[Task, ...],
    placed: PlacedGpuTasks,
    basis: object,
    device_counts: IntArray,
    devices: DeviceState,
    cache: DeviceLayoutCache,
) -> dict[int, TaskRecord] | None:
    """Fill ``devices`` (empty) with the layout of ``placed`` and return their records in input order;
    None if some node's devices cannot hold its tasks (nothing is carried then)."""
    k, n_nodes = len(placed.index), len(device_counts)
    objects = tuple(map(tasks.__getitem__, placed.index.tolist()))
    order = np.argsort(placed.node, kind="stable")  # by node, input order within a node
    by_node = placed.node[order]
    ids = np.fromiter(map(id, objects), dtype=np.uint64, count=k)[order]
    counts = np.bincount(by_node, minlength=n_nodes)
    present = np.flatnonzero(counts)  # the nodes with tasks: every other row stays empty
    starts = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    rank = np.arange(k, dtype=np.int64) - starts[by_node]  # each task's place among its node's
    records: list[TaskRecord | None] = [None] * k
    carried = cache.carried
    if carried is not None and carried.basis is basis:
        changed = _changed_nodes(carried, by_node, ids, counts, rank)
        unchanged = present[~changed[present]]
        devices.used[unchanged] = carried.used[carried.row_of[unchanged]]
        devices.releasing[unchanged] = carried.releasing[carried.row_of[unchanged]]
        kept = np.flatnonzero(~changed[by_node])
        previous = (carried.starts[by_node[kept]] + rank[kept]).tolist()
        for p, q in zip(kept.tolist(), previous, strict=True):
            records[p] = carried.records[q]
    else:
        changed = counts > 0
    for n in present[changed[present]].tolist():
        positions = order[starts[n] : starts[n + 1]].tolist()  # input positions of node n's tasks
        laid = _lay_out_node(n, positions, int(device_counts[n]), objects, placed, devices, cache.memo)
        if laid is None:
            return None
        records[starts[n] : starts[n + 1]] = laid
    by_node_records = tuple(r for r in records if r is not None)
    assert len(by_node_records) == k  # every node with tasks is either carried or laid out
    by_input = np.empty(k, dtype=np.int64)
    by_input[order] = np.arange(k, dtype=np.int64)
    in_input_order = list(map(by_node_records.__getitem__, by_input.tolist()))
    row_of = np.full(n_nodes, -1, dtype=np.int64)
    row_of[present] = np.arange(len(present))
    cache.carried = CarriedLayout(
        basis, objects, ids, counts, starts, by_node_records, row_of, devices.used[present],
        devices.releasing[present],
    )  # fmt: skip
    index: list[int] = placed.index.tolist()
    return dict(zip(index, in_input_order, strict=True))


def _changed_nodes(
    carried: CarriedLayout, by_node: IntArray, ids: npt.NDArray[np.uint64], counts: IntArray, rank: IntArray
) -> BoolArray:
    """[N] nodes whose ordered tasks are not the carried ones: another count, or some i-th task that is
    not the previous i-th."""
    changed: BoolArray = counts != carried.counts
    same_count = ~changed[by_node]
    previous = carried.starts[by_node[same_count]] + rank[same_count]
    differs = ids[same_count] != carried.ids[previous]
    changed[by_node[same_count][differs]] = True
    return changed


def _lay_out_node(
    n: int,
    positions: list[int],
    count: int,
    objects: tuple[Task, ...],
    placed: PlacedGpuTasks,
    devices: DeviceState,
    memo: dict[LayoutKey, Layout],
) -> list[TaskRecord] | None:
    """Node n's device rows from its memoised layout, and its tasks' records (in input order)."""
    amounts, releasing = placed.amount[positions].tolist(), placed.releasing[positions].tolist()
    key = (count, tuple(zip(amounts, releasing, (objects[p].devices for p in positions), strict=True)))
    layout = layout_of(key, memo)
    if layout is None:
        return None
    placements, used, held_releasing = layout
    devices.used[n, :count] = used
    devices.releasing[n, :count] = held_releasing
    return [
        TaskRecord(RELEASING if r else BOUND, n, NO_NODE, found, (), ())
        for r, found in zip(releasing, placements, strict=True)
    ]
