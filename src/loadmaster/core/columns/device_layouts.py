"""Where the input's Running GPU tasks sit on their nodes' devices, memoised by what decides it.

By the placement rule (``devices.py``), applied to the input's tasks (first those whose devices were
stored, keeping them where they are still valid, then the rest), each in input order, a node's device
layout depends only on its device count and the ordered ``(request, releasing, stored devices)`` of its
GPU tasks: a pure function of that key. A layout computed once is reused for every node with the same
key, in this snapshot and the next ones (``SnapshotCache.device_layouts``): from one cycle to the next
most nodes hold the same tasks, so the per-task device search is paid only for nodes whose tasks
changed. The result is by construction the one the task-by-task placement gives.
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.devices import DeviceState, IntArray, kept_devices, place_on_devices

# (device count, ((milli-GPU requested, releasing, stored devices), ...) in input order)
LayoutKey = tuple[int, tuple[tuple[int, bool, tuple[int, ...]], ...]]
# (each task's devices in that order, the node's used row, its releasing row), rows [count]
Layout = tuple[tuple[tuple[int, ...], ...], IntArray, IntArray]
# A bound on the memo (a layout is a few small arrays): past it, it starts afresh.
MAX_LAYOUTS = 65536


def layout_of(key: LayoutKey, memo: dict[LayoutKey, Layout]) -> Layout | None:
    """The layout for ``key`` (None: the tasks do not fit the devices; never memoised)."""
    layout = memo.get(key)
    if layout is not None:
        return layout
    count, sequence = key
    scratch = DeviceState.empty(np.array([count], dtype=np.int64))
    placements: list[tuple[int, ...]] = [()] * len(sequence)
    stored_first = [i for i, task in enumerate(sequence) if task[2]]
    derived = [i for i, task in enumerate(sequence) if not task[2]]
    for i in stored_first + derived:
        amount, releasing, stored = sequence[i]
        found = kept_devices(scratch, 0, amount, stored) or place_on_devices(
            scratch, 0, amount, use_releasing=False
        )
        if found is None:
            return None
        scratch.charge(0, found, amount, releasing=releasing)
        placements[i] = found
    layout = (tuple(placements), scratch.used[0, :count].copy(), scratch.releasing[0, :count].copy())
    if len(memo) >= MAX_LAYOUTS:
        memo.clear()
    memo[key] = layout
    return layout
