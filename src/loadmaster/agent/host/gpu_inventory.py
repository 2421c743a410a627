"""``loadmaster agent --gpus SPEC``: the GPU devices this machine declares (these machines have none to
detect, so the operator says what there is).

Grammar (docs/agent.md)::

    SPEC   := COUNT | DRIVER ":" MODEL [":" CAPS] " x" COUNT
    CAPS   := CAP ("," CAP)*            e.g. gpu,compute,utility
    COUNT  := a whole number >= 1

``--gpus 4`` declares 4 devices of no particular model; ``--gpus "nvidia:A100:gpu,compute x4"`` declares
4 NVIDIA A100 devices with the capabilities gpu and compute. Devices are numbered 0..COUNT-1: the ids the
scheduler assigns (``status.devices``) and the agent passes to the process in ``CUDA_VISIBLE_DEVICES``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from loadmaster.agent.host.node_shape import ShapeError
from loadmaster.core.resources import GPU

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_GROUP = re.compile(r"^(?P<devices>.+?)\s+x\s*(?P<count>\S+)$")
MAX_DEVICES = 1024


@dataclass(frozen=True, slots=True)
class GpuInventory:
    count: int
    model: str | None = None
    driver: str | None = None
    capabilities: tuple[str, ...] = ()

    @property
    def device_ids(self) -> tuple[int, ...]:
        return tuple(range(self.count))

    def registration_fields(self) -> dict[str, Any]:
        """What the registration body says of the devices besides ``capacity.gpu``: the Node's
        ``gpu_model``, ``gpu_driver`` and ``gpu_capabilities`` (what compose device requests match)."""
        fields: dict[str, Any] = {}
        if self.model:
            fields["gpu_model"] = self.model
        if self.driver:
            fields["gpu_driver"] = self.driver
        if self.capabilities:
            fields["gpu_capabilities"] = list(self.capabilities)
        return fields

    def capacity(self) -> dict[str, str]:
        return {GPU: str(self.count)}


def parse_gpus(text: str, option: str = "--gpus") -> GpuInventory:
    """``"4"`` or ``"nvidia:A100:gpu,compute x4"`` -> a GpuInventory; ShapeError naming ``option``."""
    spec = text.strip()
    if spec.isdigit():
        return GpuInventory(_count(spec, option))
    match = _GROUP.match(spec)
    if match is None:
        raise ShapeError(
            f'{option}: expected a device count ("4") or DRIVER:MODEL[:CAPABILITIES] xCOUNT '
            f'("nvidia:A100:gpu,compute x4"), got "{text}"'
        )
    parts = match["devices"].strip().split(":")
    if len(parts) not in (2, 3):
        raise ShapeError(
            f'{option}: expected DRIVER:MODEL or DRIVER:MODEL:CAPABILITIES, got "{match["devices"]}"'
        )
    driver, model = (
        _name(option, what, value) for what, value in (("driver", parts[0]), ("model", parts[1]))
    )
    capabilities: tuple[str, ...] = ()
    if len(parts) == 3:
        capabilities = tuple(_name(option, "capability", cap.strip()) for cap in parts[2].split(","))
        if len(set(capabilities)) != len(capabilities):
            raise ShapeError(f'{option}: a capability is given twice in "{parts[2]}"')
    return GpuInventory(_count(match["count"], option), model, driver, capabilities)


def _count(text: str, option: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_DEVICES:
        raise ShapeError(
            f'{option}: the device count must be a whole number from 1 to {MAX_DEVICES}, got "{text}"'
        )
    return int(text)


def _name(option: str, what: str, value: str) -> str:
    if not _NAME.match(value):
        raise ShapeError(f'{option}: bad {what} "{value}" (letters, digits, ".", "_", "-")')
    return value
