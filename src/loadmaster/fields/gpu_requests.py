"""GPU requests as compose writes them (B9), besides a count (``gpus: 2``, a quantity each format reads
its own way): ``gpus: all`` and a device list ``gpus: [{driver: nvidia, count: 2, capabilities: [gpu]}]``.

- ``all``: every device of the node the task lands on (a node without GPUs is filtered out);
- a device list of ONE entry: ``count`` whole devices (an integer >= 1, or ``all``; omitted = all, as
  compose reserves every matching device when no count is given) whose driver is ``driver`` (omitted:
  any) and that have every one of ``capabilities``. One entry only: a node's GPUs are alike (one model,
  one driver), so two entries could only ever ask the same devices twice.

The scenario reader and the manifest validator both call ``parse_gpu_devices`` and report its
``GpuRequestError`` at their own path (``where`` is relative: ``[0].count``).
"""

from __future__ import annotations

from dataclasses import dataclass

from loadmaster.core.limits import MAX_INTEGER, short_text
from loadmaster.core.model import GpuMatch

GPUS_ALL = "all"
DEVICE_REQUEST_FIELDS = ("driver", "count", "capabilities")


class GpuRequestError(ValueError):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where, self.message = where, message


@dataclass(frozen=True, slots=True)
class GpuDevices:
    count: int | None  # whole devices; None = every device of the node
    match: GpuMatch | None  # None for plain ``all`` (any GPU)


def is_device_request(value: object) -> bool:
    """Whether ``gpus`` is written compose's way (``all`` or a list), not as a count."""
    return value == GPUS_ALL or isinstance(value, list)


def parse_gpu_devices(value: object) -> GpuDevices:
    """``all`` or a one-entry device list (``is_device_request``); raises ``GpuRequestError``."""
    if value == GPUS_ALL:
        return GpuDevices(None, None)
    if not isinstance(value, list):
        raise GpuRequestError(
            "", f"expected a number of GPUs, all, or a device list, got {short_text(value)}"
        )
    if len(value) != 1:
        raise GpuRequestError(
            "", "give exactly one device request: a node's GPUs are alike (one driver, one model)"
        )
    entry = value[0]
    if not isinstance(entry, dict):
        raise GpuRequestError("[0]", "expected a mapping {driver, count, capabilities}")
    for key in entry:
        if key not in DEVICE_REQUEST_FIELDS:
            raise GpuRequestError(f"[0].{key}", f"unknown field (known: {', '.join(DEVICE_REQUEST_FIELDS)})")
    return GpuDevices(_count(entry.get("count", GPUS_ALL)), GpuMatch(_driver(entry), _capabilities(entry)))


def _count(value: object) -> int | None:
    if value == GPUS_ALL:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INTEGER:
        raise GpuRequestError(
            "[0].count", f"expected a whole number of devices >= 1 or all, got {short_text(value)}"
        )
    return value


def _driver(entry: dict[object, object]) -> str | None:
    driver = entry.get("driver")
    if driver is not None and (not isinstance(driver, str) or not driver.strip()):
        raise GpuRequestError(
            "[0].driver", f"expected a driver name such as nvidia, got {short_text(driver)}"
        )
    return driver


def _capabilities(entry: dict[object, object]) -> tuple[str, ...]:
    capabilities = entry.get("capabilities", [])
    if not isinstance(capabilities, list):
        raise GpuRequestError("[0].capabilities", "expected a list of capabilities such as [gpu, compute]")
    for index, item in enumerate(capabilities):
        if not isinstance(item, str) or not item.strip():
            raise GpuRequestError(
                f"[0].capabilities[{index}]", f"expected a capability name, got {short_text(item)}"
            )
    return tuple(dict.fromkeys(capabilities))  # as written, each once
