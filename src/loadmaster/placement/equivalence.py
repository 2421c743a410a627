"""Equivalence classes: tasks that would be treated identically by every filter and scorer.

Two tasks with the same key get the same masks, scores and explanations, so the engine computes
them once (Borg's "equivalence classes"). The key holds every task field a plugin reads; the job is
included because locality, least-instances and queue accounting depend on it.
"""

from __future__ import annotations

from collections.abc import Hashable

from loadmaster.core.model import Task

# Scorers whose value depends on which job a task belongs to (co-location, same-job counts).
JOB_SENSITIVE = frozenset({"locality", "least_instances"})
# Scorers whose value depends on the job's name (every job of that name counts as one service): tasks of
# same-named jobs share a class.
JOB_NAME_SENSITIVE = frozenset({"service_spread", "service_pack"})
# Scorers whose value depends on the task itself (its name), not only on its class: never cached per class.
TASK_SENSITIVE = frozenset({"service_spread"})


def _items(mapping: dict[str, str] | dict[str, int]) -> tuple[tuple[str, object], ...]:
    return tuple(sorted(mapping.items())) if mapping else ()


def static_key(task: Task, gpu: int) -> Hashable:
    """Everything the static (state-independent) filters read."""
    return (
        task.tolerations,
        _items(task.node_selector),
        task.required_node_affinity,
        task.hosts,
        task.avoid_nodes,
        task.gpu_models if gpu or task.gpu_all else None,
        task.gpu_all,
        task.gpu_match,
        task.license_tier,
        task.runtime,
    )


def class_key(task: Task, job: Hashable) -> Hashable:
    """Everything any plugin reads: tasks with equal keys are interchangeable for placement.
    ``job`` is the job's index (``JOB_SENSITIVE``), its name (``JOB_NAME_SENSITIVE``) or None when the
    profile has no job-dependent scorer."""
    return (
        job,
        _items(task.request),
        static_key(task, task.request.get("gpu", 0)),
        task.ports,
        task.volumes,
        task.topology_spread_constraints,
        _items(task.labels) if task.topology_spread_constraints else (),
        task.preferred_node_affinity,
        task.image,
        task.previous_node,
        task.delayed_shutdown,
        task.overcommit,
    )
