"""The ``queues`` list and its hierarchy: unique names, parents that exist, no cycles.

Jobs belong to leaf queues (queues no other queue names as parent). The queue ``default`` exists
implicitly, at the top level and without quota, when a job uses it and the file does not list it;
it is then appended after the listed queues (list order is the age tie-breaker, and an implicit
queue is the youngest).
"""

from __future__ import annotations

from typing import Any

from loadmaster.core.model import DEFAULT_QUEUE, Queue
from loadmaster.scenario.errors import ScenarioError, did_you_mean
from loadmaster.scenario.fields import (
    as_int,
    as_mapping,
    as_name,
    as_number,
    as_uniquely_named,
    check_keys,
    require,
)
from loadmaster.scenario.quantities import as_resources

_QUEUE_FIELDS = frozenset({"name", "parent", "priority", "deserved", "limit", "over_quota_weight"})


def as_queue(value: object, path: str) -> Queue:
    mapping: dict[Any, Any] = as_mapping(value, path)
    check_keys(mapping, _QUEUE_FIELDS, path)
    parent, priority = mapping.get("parent"), mapping.get("priority")
    deserved, limit, weight = mapping.get("deserved"), mapping.get("limit"), mapping.get("over_quota_weight")
    return Queue(
        name=as_name(require(mapping, "name", path), f"{path}.name"),
        parent=None if parent is None else as_name(parent, f"{path}.parent"),
        priority=0 if priority is None else as_int(priority, f"{path}.priority"),
        deserved={} if deserved is None else as_resources(deserved, f"{path}.deserved"),
        limit={} if limit is None else as_resources(limit, f"{path}.limit"),
        over_quota_weight=1.0
        if weight is None
        else as_number(weight, f"{path}.over_quota_weight", minimum=0),
    )


def _check_no_cycles(queues: list[Queue], path: str) -> None:
    """Follow each queue's parents; meeting a queue twice on one walk is a cycle."""
    parent_of = {queue.name: queue.parent for queue in queues}
    for index, queue in enumerate(queues):
        walk = [queue.name]
        parent = queue.parent
        while parent is not None:
            if parent in walk:
                chain = " -> ".join([*walk[walk.index(parent) :], parent])
                raise ScenarioError(f"{path}[{index}].parent", f"cycle in queue parents: {chain}")
            walk.append(parent)
            parent = parent_of[parent]


def as_queues(value: object, path: str = "queues") -> tuple[Queue, ...]:
    queues = as_uniquely_named(value, path, as_queue, "queue")
    names = {queue.name for queue in queues}
    for index, queue in enumerate(queues):
        if queue.parent is not None and queue.parent not in names:
            raise ScenarioError(
                f"{path}[{index}].parent",
                f'unknown queue "{queue.parent}"' + did_you_mean(queue.parent, names),
            )
    _check_no_cycles(list(queues), path)
    return queues


def leaf_names(queues: tuple[Queue, ...]) -> frozenset[str]:
    """Queues that are no queue's parent: the ones jobs may use."""
    parents = {queue.parent for queue in queues}
    return frozenset(queue.name for queue in queues if queue.name not in parents)


def check_job_queue(name: str, path: str, listed: frozenset[str], leaves: frozenset[str]) -> None:
    """A job's queue must be a listed leaf, or the implicit ``default`` when that is not listed.
    ``listed``: the names of every listed queue."""
    if name in leaves:
        return
    if name in listed:
        raise ScenarioError(path, f'queue "{name}" is a parent queue; jobs belong to leaf queues')
    if name != DEFAULT_QUEUE:
        raise ScenarioError(path, f'unknown queue "{name}"' + did_you_mean(name, listed))


def with_implicit_default(queues: tuple[Queue, ...], job_queues: set[str]) -> tuple[Queue, ...]:
    """Append the implicit ``default`` queue when a job uses it and the file does not list it."""
    if DEFAULT_QUEUE in job_queues and all(queue.name != DEFAULT_QUEUE for queue in queues):
        return (*queues, Queue(name=DEFAULT_QUEUE))
    return queues
