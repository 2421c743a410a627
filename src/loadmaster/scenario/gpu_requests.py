"""A task's ``gpus`` field, as services write it (manifests): a count (the same as ``request.gpu``),
``all``, or a compose device list (``fields/gpu_requests.py``). Given with ``request.gpu`` it is refused
(the count would be given twice)."""

from __future__ import annotations

from dataclasses import dataclass

from loadmaster.core.model import GpuMatch
from loadmaster.core.resources import GPU, GPU_DEVICE, format_quantity
from loadmaster.fields.gpu_requests import GpuRequestError, is_device_request, parse_gpu_devices
from loadmaster.fields.gpus import is_valid_gpu_request
from loadmaster.scenario.errors import ScenarioError
from loadmaster.scenario.quantities import as_quantity


@dataclass(frozen=True, slots=True)
class TaskGpus:
    request: dict[str, int]  # the task's request, with the count in ``gpu`` when there is one
    gpu_all: bool = False
    match: GpuMatch | None = None


def with_gpus(value: object, path: str, request: dict[str, int]) -> TaskGpus:
    """``request`` (read from ``request``) completed by the ``gpus`` field at ``path``."""
    if GPU in request:
        raise ScenarioError(path, "the GPU count is given twice: use gpus or request.gpu, not both")
    if not is_device_request(value):
        amount = as_quantity(GPU, value, path)
        if not is_valid_gpu_request(amount):
            raise ScenarioError(
                path, f"a request of 1 gpu or more takes whole devices, got {format_quantity(GPU, amount)}"
            )
        return TaskGpus({**request, GPU: amount} if amount else request)
    try:
        devices = parse_gpu_devices(value)
    except GpuRequestError as error:
        raise ScenarioError(f"{path}{error.where}", error.message) from None
    if devices.count is None:
        return TaskGpus(request, gpu_all=True, match=devices.match)
    return TaskGpus({**request, GPU: devices.count * GPU_DEVICE}, match=devices.match)
