"""GPU devices: a node's ``gpu`` allocatable is a whole number of devices of 1.0 (1000 milli) each.

A request below one device needs that share free on ONE device (sharing); a request of k >= 1 devices
needs k whole, fully free devices; ``gpus: all`` needs every device of the node, fully free. Placement
rule (scenario spec): a fraction goes to the most-used device where it still fits (lowest index on
ties); whole requests take the lowest-indexed free devices.
"Free" for a bind excludes what Releasing tasks hold; for a Pipelined placement it includes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loadmaster.core.resources import GPU_DEVICE

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(slots=True)
class DeviceState:
    capacity: IntArray  # [N, D] GPU_DEVICE for devices that exist, 0 for padding
    used: IntArray  # [N, D] milli-GPU held by Running, bound and Pipelined tasks
    releasing: IntArray  # [N, D] milli-GPU held by Releasing tasks

    @classmethod
    def empty(cls, device_counts: IntArray) -> DeviceState:
        width = max(1, int(device_counts.max(initial=0)))
        exists = np.arange(width)[None, :] < device_counts[:, None]
        capacity = np.where(exists, GPU_DEVICE, 0).astype(np.int64)
        return cls(capacity, np.zeros_like(capacity), np.zeros_like(capacity))

    def free(self, use_releasing: bool) -> IntArray:
        taken = self.used if use_releasing else self.used + self.releasing
        return self.capacity - taken

    def charge(self, n: int, devices: tuple[int, ...], amount: int, releasing: bool, sign: int = 1) -> None:
        """Add (sign=1) or remove (sign=-1) a task's GPU share on its devices."""
        target = self.releasing if releasing else self.used
        share = amount if amount < GPU_DEVICE else GPU_DEVICE
        for d in devices:
            target[n, d] += sign * share


def fits_devices(state: DeviceState, amount: int, use_releasing: bool, cols: slice | IntArray) -> BoolArray:
    """Nodes (of ``cols``) where a GPU request of ``amount`` milli-GPU fits on devices."""
    taken = state.used[cols] if use_releasing else state.used[cols] + state.releasing[cols]
    capacity = state.capacity[cols]
    free = capacity - taken
    if amount < GPU_DEVICE:
        return np.asarray((free >= amount).any(axis=1))
    whole = amount // GPU_DEVICE
    fully_free = (free == capacity) & (capacity > 0)
    return np.asarray(fully_free.sum(axis=1) >= whole)


def fits_every_device(state: DeviceState, use_releasing: bool, cols: slice | IntArray) -> BoolArray:
    """Nodes (of ``cols``) whose every device is fully free: where ``gpus: all`` fits. A node without
    devices passes here (vacuously); the ``gpu`` filter turns it away."""
    taken = state.used[cols] if use_releasing else state.used[cols] + state.releasing[cols]
    return np.asarray((taken == 0).all(axis=1))


def kept_devices(state: DeviceState, n: int, amount: int, devices: tuple[int, ...]) -> tuple[int, ...] | None:
    """``devices`` (a placed task's stored devices) if they are a valid placement of ``amount`` on node
    ``n`` now: one device with room for a share, or that many fully free devices for whole GPUs. None
    otherwise (none stored, the node shrank, or another task holds them): then placed by the rule."""
    if not devices:
        return None
    capacity = state.capacity[n]
    if any(d < 0 or d >= capacity.size or capacity[d] == 0 for d in devices):
        return None
    free = capacity - state.used[n] - state.releasing[n]
    if amount < GPU_DEVICE:
        return devices if len(devices) == 1 and free[devices[0]] >= amount else None
    if len(devices) != amount // GPU_DEVICE or len(set(devices)) != len(devices):
        return None
    return devices if all(free[d] == capacity[d] for d in devices) else None


def place_on_devices(state: DeviceState, n: int, amount: int, use_releasing: bool) -> tuple[int, ...] | None:
    """The devices of node ``n`` a request takes, by the placement rule; None if it does not fit."""
    taken = state.used[n] if use_releasing else state.used[n] + state.releasing[n]
    free = state.capacity[n] - taken
    if amount < GPU_DEVICE:
        fitting = np.flatnonzero(free >= amount)
        if fitting.size == 0:
            return None
        # most used = least free; argmin returns the lowest index on ties
        return (int(fitting[np.argmin(free[fitting])]),)
    whole = amount // GPU_DEVICE
    capacity = state.capacity[n]
    fully_free = np.flatnonzero((free == capacity) & (capacity > 0))
    if fully_free.size < whole:
        return None
    return tuple(int(d) for d in fully_free[:whole])
