"""The ``jobs`` list: each job with its tasks, queue, priority and gang size.

Defaults (spec): queue ``default``, priority 50, preemptible when priority < 100 (KAI's rule),
min_available 1. Job names are unique, and task names are unique across the whole file (the
simulate output and ``expect`` are keyed by task name). A job needs at least one task.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

from loadmaster.core.model import (
    DEFAULT_JOB_PRIORITY,
    DEFAULT_QUEUE,
    Job,
    Queue,
    Task,
    is_preemptible_by_default,
)
from loadmaster.core.resources import GPU
from loadmaster.scenario.errors import ScenarioError
from loadmaster.scenario.fields import (
    as_bool,
    as_duration_s,
    as_int,
    as_list,
    as_mapping,
    as_name,
    check_keys,
    require,
)
from loadmaster.scenario.queues import check_job_queue, leaf_names
from loadmaster.scenario.tasks import as_task

_JOB_FIELDS = frozenset(
    {"name", "queue", "priority", "preemptible", "min_available", "stale_for", "overcommit", "tasks"}
)


@dataclass(slots=True)
class JobContext:
    """What jobs and tasks refer to, parsed before them; collects task names as they come."""

    node_names: Collection[str]
    node_gpus: dict[str, int]  # node -> its allocatable gpu: what a Running ``gpus: all`` task holds
    license_tiers: tuple[str, ...]
    queues: tuple[Queue, ...]
    leaves: frozenset[str] = frozenset()
    listed: frozenset[str] = frozenset()  # every listed queue's name
    job_paths: dict[str, str] = field(default_factory=dict)  # job name -> where first defined
    task_paths: dict[str, str] = field(default_factory=dict)  # task name -> where first defined

    def __post_init__(self) -> None:
        self.leaves = leaf_names(self.queues)
        self.listed = frozenset(queue.name for queue in self.queues)


def _holding_every_device(task: Task, path: str, node_gpus: int) -> Task:
    """A ``gpus: all`` task on a node holds every device there: its request counts them."""
    if not node_gpus:
        raise ScenarioError(f"{path}.gpus", f"gpus: all on node {task.node}, which has no gpus")
    return replace(task, request={**task.request, GPU: node_gpus})


def as_job(value: object, path: str, context: JobContext) -> Job:
    mapping: dict[Any, Any] = as_mapping(value, path)
    check_keys(mapping, _JOB_FIELDS, path)
    name = as_name(require(mapping, "name", path), f"{path}.name")
    if name in context.job_paths:
        raise ScenarioError(
            f"{path}.name", f'duplicate job name "{name}" (first at {context.job_paths[name]})'
        )
    context.job_paths[name] = path
    raw = mapping.get("queue")
    queue = DEFAULT_QUEUE if raw is None else as_name(raw, f"{path}.queue")
    check_job_queue(queue, f"{path}.queue", context.listed, context.leaves)
    raw = mapping.get("priority")
    priority = DEFAULT_JOB_PRIORITY if raw is None else as_int(raw, f"{path}.priority")
    raw = mapping.get("preemptible")
    preemptible = is_preemptible_by_default(priority) if raw is None else as_bool(raw, f"{path}.preemptible")
    raw = mapping.get("stale_for")
    stale_for_s = None if raw is None else as_duration_s(raw, f"{path}.stale_for")
    raw = mapping.get("overcommit")  # the job opts in (B8): its tasks see allocatable x the nodes' factors
    overcommit = False if raw is None else as_bool(raw, f"{path}.overcommit")

    tasks_path = f"{path}.tasks"
    items = as_list(require(mapping, "tasks", path), tasks_path)
    if not items:
        raise ScenarioError(tasks_path, "a job needs at least one task")
    tasks = []
    task_paths = context.task_paths
    for index, item in enumerate(items):
        task_path = f"{tasks_path}[{index}]"
        task = as_task(item, task_path, name, context.node_names, context.license_tiers)
        if overcommit:
            task = replace(task, overcommit=True)
        if task.gpu_all and task.node is not None:
            task = _holding_every_device(task, task_path, context.node_gpus[task.node])
        if task.name in task_paths:
            raise ScenarioError(
                f"{task_path}.name", f'duplicate task name "{task.name}" (first at {task_paths[task.name]})'
            )
        task_paths[task.name] = task_path
        tasks.append(task)

    raw = mapping.get("min_available")
    min_available = 1 if raw is None else as_int(raw, f"{path}.min_available", minimum=1)
    if min_available > len(tasks):
        raise ScenarioError(
            f"{path}.min_available", f"{min_available} exceeds the job's number of tasks ({len(tasks)})"
        )
    return Job(
        name=name,
        tasks=tuple(tasks),
        queue=queue,
        priority=priority,
        preemptible=preemptible,
        min_available=min_available,
        stale_for_s=stale_for_s,
    )


def as_jobs(value: object, path: str, context: JobContext) -> tuple[Job, ...]:
    return tuple(as_job(item, f"{path}[{index}]", context) for index, item in enumerate(as_list(value, path)))
