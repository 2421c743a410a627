"""Readers for measured values: resource quantities, durations, timestamps and throughput.

Quantities are checked with ``core.resources`` but kept as the user wrote them (``500m`` stays
``"500m"``), so an object read back prints what was applied; conversion parses them again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from loadmaster.core.resources import (
    GPU,
    GPU_DEVICE,
    QuantityError,
    parse_bits_per_second,
    parse_duration_s,
    parse_quantity,
    validate_resource_name,
)
from loadmaster.fields.gpu_requests import GpuRequestError, is_device_request, parse_gpu_devices
from loadmaster.fields.gpus import is_valid_gpu_request, is_whole_devices
from loadmaster.manifests.errors import Problems
from loadmaster.manifests.timestamps import format_timestamp, parse_timestamp
from loadmaster.manifests.validation import Reader, at, describe


def whole_gpu_problem(amount: int) -> str | None:
    """GPUs are devices: one or more must be whole devices; below one is a share of one device."""
    if not is_valid_gpu_request(amount):
        return f"{amount / GPU_DEVICE:g} GPUs: a request of 1 GPU or more must be a whole number of devices"
    return None


def resources(*, whole_gpus: bool = False) -> Reader:
    """``{cpu: 500m, memory: 2Gi, gpu: 1}``; ``whole_gpus`` for node shapes (a node has whole devices)."""

    def read(problems: Problems, path: str, value: object) -> dict[str, Any]:
        if not isinstance(value, dict):
            problems.add(path, f"expected a mapping of resource to quantity, got {describe(value)}")
            return {}
        for name, quantity in value.items():
            try:
                validate_resource_name(name)
            except QuantityError as exc:
                problems.add(path, str(exc))
                continue
            amount = quantity_problem(problems, at(path, name), name, quantity)
            if amount is not None and name == GPU:
                problem = gpu_amount_problem(amount, whole_gpus)
                if problem:
                    problems.add(at(path, name), problem)
        return dict(value)

    return read


def gpu_amount_problem(amount: int, whole_gpus: bool) -> str | None:
    if whole_gpus and not is_whole_devices(amount):
        return f"{amount / GPU_DEVICE:g} GPUs: a node has a whole number of GPU devices"
    return whole_gpu_problem(amount)


def quantity_problem(problems: Problems, path: str, resource: str, value: object) -> int | None:
    """Parse one quantity; record the problem and return None when it is bad."""
    try:
        return parse_quantity(resource, value)
    except QuantityError as exc:
        problems.add(path, str(exc))
        return None


def quantity(resource: str) -> Reader:
    """One quantity of ``resource`` (``size: 10Gi`` is memory-like bytes)."""

    def read(problems: Problems, path: str, value: object) -> Any:
        quantity_problem(problems, path, resource, value)
        return value

    return read


def gpu_count(problems: Problems, path: str, value: object) -> Any:
    """``gpus: 2`` or ``gpus: 0.5``: the service's GPU request, in devices; or compose's ``gpus: all`` and
    device list (``fields/gpu_requests.py``)."""
    if is_device_request(value):
        try:
            parse_gpu_devices(value)
        except GpuRequestError as error:
            problems.add(f"{path}{error.where}", error.message)
        return value
    amount = quantity_problem(problems, path, GPU, value)
    if amount is not None:
        problem = whole_gpu_problem(amount)
        if problem:
            problems.add(path, problem)
    return value


def _parsed_by(parse: Callable[[object], object]) -> Reader:
    """A reader that keeps the value as written and records why ``parse`` refuses it, if it does."""

    def read(problems: Problems, path: str, value: object) -> Any:
        try:
            parse(value)
        except QuantityError as exc:
            problems.add(path, str(exc))
        return value

    return read


duration = _parsed_by(parse_duration_s)  # 30s, 5m, 1h
throughput = _parsed_by(parse_bits_per_second)  # 100Mbps


def timestamp(problems: Problems, path: str, value: object) -> Any:
    """An RFC 3339 string; a datetime given by Python callers is stored as that string."""
    try:
        moment = parse_timestamp(value)
    except ValueError as exc:
        problems.add(path, str(exc))
        return value
    return format_timestamp(moment) if isinstance(value, datetime) else value


def parsed_or_none(value: object) -> dict[str, int] | None:
    """Parse a resource mapping for a cross-field check; None if it was already reported as bad."""
    if not isinstance(value, dict):
        return None
    try:
        return {str(name): parse_quantity(str(name), amount) for name, amount in value.items()}
    except QuantityError:
        return None
