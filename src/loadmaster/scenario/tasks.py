"""One entry of a job's ``tasks``: request, status and binding, constraints and the seeds' task fields.

Binding rules: a Running or Releasing task names the node it is on (a known node); a Pending task has
no ``node`` (stickiness is ``previous_node``, which may name a node no longer in the file: it then
simply matches nothing). A gpu request of 1 or more takes whole devices, so it must be whole.

Beyond the spec: ``required_node_affinity: [{key, operator, values}]`` (operators In, NotIn, Exists,
DoesNotExist, Gt, Lt; all must hold) is a hard node filter like ``node_selector``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from loadmaster.core.model import ImageRef, Task, TaskStatus
from loadmaster.core.resources import GPU, format_quantity
from loadmaster.fields.gpus import is_valid_gpu_request
from loadmaster.fields.ports import MAX_PORT, MIN_PORT
from loadmaster.scenario.errors import ScenarioError, did_you_mean
from loadmaster.scenario.fields import (
    as_bool,
    as_int,
    as_labels,
    as_list,
    as_mapping,
    as_name,
    as_str_list,
    as_tuple,
    check_keys,
    require,
    wrong_type,
)
from loadmaster.scenario.gpu_requests import TaskGpus, with_gpus
from loadmaster.scenario.nodes import check_license_tier
from loadmaster.scenario.quantities import as_memory_bytes, as_resources
from loadmaster.scenario.runtimes import as_runtime_requirement
from loadmaster.scenario.selectors import as_expression, as_preferred_term, as_spread_constraint
from loadmaster.scenario.taints import as_toleration
from loadmaster.scenario.volumes import as_volume_claim

INPUT_STATUSES = {
    "Pending": TaskStatus.PENDING,
    "Running": TaskStatus.RUNNING,
    "Releasing": TaskStatus.RELEASING,
}
BOUND_STATUSES = (TaskStatus.RUNNING, TaskStatus.RELEASING)

_TASK_FIELDS = frozenset(
    {
        "name",
        "request",
        "status",
        "node",
        "labels",
        "node_selector",
        "required_node_affinity",
        "tolerations",
        "preferred_node_affinity",
        "topology_spread_constraints",
        "hosts",
        "ports",
        "gpu_models",
        "gpus",
        "license_tier",
        "runtime",
        "volumes",
        "previous_node",
        "image",
        "delayed_shutdown",
    }
)
_IMAGE_FIELDS = frozenset({"name", "size"})


def _status(value: object, path: str) -> TaskStatus:
    status = INPUT_STATUSES.get(value) if type(value) is str else None
    if status is None:
        choices = tuple(INPUT_STATUSES)
        if type(value) is not str:
            raise wrong_type(path, "one of " + ", ".join(choices), value)
        raise ScenarioError(
            path, f'bad value "{value}": expected one of {", ".join(choices)}' + did_you_mean(value, choices)
        )
    return status


def _bound_node(value: object, path: str, status: TaskStatus, node_names: Collection[str]) -> str | None:
    if status not in BOUND_STATUSES:
        if value is not None:
            raise ScenarioError(
                path, "node is only for Running or Releasing tasks; use previous_node for stickiness"
            )
        return None
    if value is None:
        raise ScenarioError(path, f"required: a {status.value} task names the node it is on")
    node = as_name(value, path)
    if node not in node_names:
        raise ScenarioError(path, f'unknown node "{node}"' + did_you_mean(node, node_names))
    return node


def _request(value: object, path: str) -> dict[str, int]:
    request = as_resources(value, path)
    gpus = request.get(GPU, 0)
    if not is_valid_gpu_request(gpus):
        raise ScenarioError(
            f"{path}.{GPU}",
            f"a request of 1 gpu or more takes whole devices: must be a whole number, got "
            f"{format_quantity(GPU, gpus)}",
        )
    return request


def _ports(value: object, path: str) -> tuple[int, ...]:
    ports: list[int] = []
    for index, item in enumerate(as_list(value, path)):
        port = as_int(item, f"{path}[{index}]", MIN_PORT, MAX_PORT)
        if port in ports:
            raise ScenarioError(f"{path}[{index}]", f"duplicate port {port}")
        ports.append(port)
    return tuple(ports)


def _image(value: object, path: str) -> ImageRef:
    mapping = as_mapping(value, path)
    check_keys(mapping, _IMAGE_FIELDS, path)
    size = mapping.get("size")
    return ImageRef(
        name=as_name(require(mapping, "name", path), f"{path}.name"),
        size_bytes=0 if size is None else as_memory_bytes(size, f"{path}.size"),
    )


def as_task(
    value: object, path: str, job: str, node_names: Collection[str], license_tiers: tuple[str, ...]
) -> Task:
    m: dict[Any, Any] = as_mapping(value, path)
    check_keys(m, _TASK_FIELDS, path)
    name = as_name(require(m, "name", path), f"{path}.name")
    raw = m.get("status")
    status = TaskStatus.PENDING if raw is None else _status(raw, f"{path}.status")
    node = _bound_node(m.get("node"), f"{path}.node", status, node_names)
    raw = m.get("request")
    request = {} if raw is None else _request(raw, f"{path}.request")
    raw = m.get("gpus")
    gpus = TaskGpus(request) if raw is None else with_gpus(raw, f"{path}.gpus", request)
    raw = m.get("previous_node")
    previous_node = None if raw is None else as_name(raw, f"{path}.previous_node")
    labels, selector, affinity = m.get("labels"), m.get("node_selector"), m.get("required_node_affinity")
    tolerations, preferred = m.get("tolerations"), m.get("preferred_node_affinity")
    spread, hosts, ports = m.get("topology_spread_constraints"), m.get("hosts"), m.get("ports")
    gpu_models, tier, runtime = m.get("gpu_models"), m.get("license_tier"), m.get("runtime")
    volumes, image, delayed = m.get("volumes"), m.get("image"), m.get("delayed_shutdown")
    return Task(
        name=name,
        job=job,
        request=gpus.request,
        status=status,
        node=node,
        labels={} if labels is None else as_labels(labels, f"{path}.labels"),
        node_selector={} if selector is None else as_labels(selector, f"{path}.node_selector"),
        required_node_affinity=()
        if affinity is None
        else as_tuple(affinity, f"{path}.required_node_affinity", as_expression),
        tolerations=()
        if tolerations is None
        else as_tuple(tolerations, f"{path}.tolerations", as_toleration),
        preferred_node_affinity=()
        if preferred is None
        else as_tuple(preferred, f"{path}.preferred_node_affinity", as_preferred_term),
        topology_spread_constraints=()
        if spread is None
        else as_tuple(spread, f"{path}.topology_spread_constraints", as_spread_constraint),
        hosts=None if hosts is None else as_str_list(hosts, f"{path}.hosts"),
        ports=() if ports is None else _ports(ports, f"{path}.ports"),
        gpu_models=None if gpu_models is None else as_str_list(gpu_models, f"{path}.gpu_models"),
        gpu_all=gpus.gpu_all,
        gpu_match=gpus.match,
        license_tier=None
        if tier is None
        else check_license_tier(tier, f"{path}.license_tier", license_tiers),
        runtime=None if runtime is None else as_runtime_requirement(runtime, f"{path}.runtime"),
        volumes=() if volumes is None else as_tuple(volumes, f"{path}.volumes", as_volume_claim),
        previous_node=previous_node,
        image=None if image is None else _image(image, f"{path}.image"),
        delayed_shutdown=False if delayed is None else as_bool(delayed, f"{path}.delayed_shutdown"),
    )
