"""GPU amounts: a device is 1.0 GPU (``GPU_DEVICE`` milli-devices); only a share below one device may be
fractional, so a request of 1 GPU or more takes whole devices, and a node has whole devices."""

from __future__ import annotations

from loadmaster.core.resources import GPU_DEVICE


def is_whole_devices(amount: int) -> bool:
    """A node's GPU amount (canonical milli-devices): whole devices only."""
    return amount % GPU_DEVICE == 0


def is_valid_gpu_request(amount: int) -> bool:
    """A task's GPU request: a share of one device, or whole devices."""
    return amount < GPU_DEVICE or is_whole_devices(amount)
