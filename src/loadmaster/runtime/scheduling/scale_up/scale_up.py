"""Scale-up: when nothing fits anywhere and WorkerTemplates exist, ask for a node (LRS K1).

The template is chosen in three tiers, the first that gives an answer wins:

1. **exact**: a template the replica fits on whose allocatable equals the request for every resource
   the replica asks for (a shape made for this workload);
2. **smallest fit**: among templates it fits on, the cheapest (``cost``), then the smallest, then by name;
3. **largest**: it fits on none (the request exceeds every template), so the largest is asked for.

"Fits" is decided by the real placement engine: the replica is placed, alone, against the nodes the
templates would become (``WorkerTemplate.as_node``), so selectors, taints, GPU models, runtimes and
volumes count exactly as they will on the real node. Size is the sum over cpu, memory and GPU of the
template's share of the largest template's allocatable (so no single unit dominates).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from loadmaster.core.model import Cluster, Job, SchedulerConfig, Task, TaskStatus
from loadmaster.core.resources import CPU, GPU, MEMORY
from loadmaster.manifests import WorkerTemplate
from loadmaster.session import Session

Tier = Literal["exact", "smallest_fit", "largest"]
_SIZE_RESOURCES = (CPU, MEMORY, GPU)
_PROBE_PREFIX = "template:"


@dataclass(frozen=True, slots=True)
class TemplateChoice:
    template: str
    tier: Tier


def _size(template: WorkerTemplate, largest: dict[str, int]) -> float:
    return sum(template.allocatable.get(r, 0) / largest[r] for r in _SIZE_RESOURCES if largest.get(r))


def _fitting_templates(
    tasks: Sequence[Task], templates: Sequence[WorkerTemplate], config: SchedulerConfig
) -> list[set[str]]:
    """For each task, the names of the templates it would fit on (one engine pass for all tasks)."""
    nodes = tuple(t.as_node(f"{_PROBE_PREFIX}{t.name}") for t in templates)
    probes = tuple(
        Job(
            name=f"probe-{i}",
            tasks=(
                dataclasses.replace(
                    task,
                    name=f"probe-{i}",
                    job=f"probe-{i}",
                    status=TaskStatus.PENDING,
                    node=None,
                    previous_node=None,
                ),
            ),
        )
        for i, task in enumerate(tasks)
    )
    session = Session.open(Cluster(nodes, probes, (), config))
    engine, snapshot = session.engine, session.snapshot
    fits: list[set[str]] = []
    for i in range(len(tasks)):
        mask = engine.feasible(engine.context(snapshot.task_of(f"probe-{i}")))
        fits.append({snapshot.node_names[n].removeprefix(_PROBE_PREFIX) for n in mask.nonzero()[0]})
    return fits


def choose_templates(
    tasks: Sequence[Task], templates: Sequence[WorkerTemplate], config: SchedulerConfig
) -> list[TemplateChoice | None]:
    """The template to ask for, per task (None only when there are no templates)."""
    if not templates:
        return [None for _ in tasks]
    by_name = {t.name: t for t in templates}
    largest = {r: max(t.allocatable.get(r, 0) for t in templates) for r in _SIZE_RESOURCES}
    order = sorted(templates, key=lambda t: (t.cost, _size(t, largest), t.name))
    biggest = max(templates, key=lambda t: (_size(t, largest), -t.cost, t.name))
    choices: list[TemplateChoice | None] = []
    for task, fitting in zip(tasks, _fitting_templates(tasks, templates, config), strict=True):
        exact = sorted(
            name
            for name in fitting
            if all(by_name[name].allocatable.get(r, 0) == amount for r, amount in task.request.items())
        )
        if exact:
            choices.append(TemplateChoice(exact[0], "exact"))
            continue
        smallest = next((t for t in order if t.name in fitting), None)
        choices.append(
            TemplateChoice(smallest.name, "smallest_fit")
            if smallest
            else TemplateChoice(biggest.name, "largest")
        )
    return choices
