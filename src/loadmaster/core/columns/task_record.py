"""Where one task is inside a cycle: its phase, node, GPU devices and volume charges.

The phases are the int8 codes of ``WorkingState.task_phase``; a ``TaskRecord`` is kept only for what the
arrays cannot say (devices, charges, the node a moving task leaves). Its own module so that the device
layouts (``carried_layout.py``) can make records without importing the snapshot that uses them.
"""

from __future__ import annotations

from dataclasses import dataclass

from loadmaster.core.columns.task_columns import NO_NODE
from loadmaster.core.columns.volumes import Charges

# Task phases inside a cycle (the int8 codes of WorkingState.task_phase).
PENDING, BOUND, PIPELINED, RELEASING = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """Where one task is: phase, node, devices and volume charges (and, when moving, where it leaves)."""

    phase: int
    node: int
    release_node: int
    devices: tuple[int, ...]
    release_devices: tuple[int, ...]
    pools: Charges


UNPLACED = TaskRecord(PENDING, NO_NODE, NO_NODE, (), (), ())
