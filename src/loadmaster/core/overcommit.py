"""The room overcommit adds to a node, for the tasks that opted in (B8; conflict table (b) row 2).

A node's factor f_r >= 1 (``Node.overcommit``) lets an opted-in task see ``allocatable_r x f_r``;
every other task sees plain ``allocatable_r``. With ``free = allocatable - used`` that is

    free_opted_in[r, n] = free[r, n] + room[r, n],   room[r, n] = floor(alloc[r, n] x f_r(n)) - alloc[r, n]

so the capacity filter adds one precomputed column per node for opted-in tasks only, and a node that
opted-in work has pushed past its allocatable (free < 0) refuses every other task. Factors are read as
the decimals written (``Decimal(repr(1.3))`` is exactly 1.3), so ``floor`` never loses a unit to binary
rounding.
"""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal

import numpy as np
import numpy.typing as npt

from loadmaster.core.model import Node

IntArray = npt.NDArray[np.int64]


def overcommitted_amount(amount: int, factor: float) -> int:
    """``floor(amount x factor)``: what an opted-in task may fill of ``amount``."""
    return int((Decimal(amount) * Decimal(repr(factor))).to_integral_value(rounding=ROUND_FLOOR))


def overcommit_room(nodes: tuple[Node, ...], resources: tuple[str, ...], node_alloc: IntArray) -> IntArray:
    """``room[r, n]`` (module docstring); zeros when no node declares a factor. Read-only."""
    room = np.zeros_like(node_alloc)
    rows = {name: r for r, name in enumerate(resources)}
    for n, node in enumerate(nodes):
        for resource, factor in node.overcommit.items():
            r = rows.get(resource)
            if r is not None and factor > 1:
                alloc = int(node_alloc[r, n])
                room[r, n] = overcommitted_amount(alloc, factor) - alloc
    room.flags.writeable = False
    return room
