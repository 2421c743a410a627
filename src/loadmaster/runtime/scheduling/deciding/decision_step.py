"""The decide step of a scheduling cycle: ``run_cycle`` and what the runtime reads of its plan.

One implementation, run where the server's ``decide_in`` setting says (``decision_workers.py``): in a
thread of the server's process (tests, the timeline harness) or in a worker process (``loadmaster
server``: a long cycle then cannot starve the event loop of the GIL). Either way the result is a
``DecidedCycle`` holding only what the runtime reads, so that it is small to send between processes:

* the decisions, the queues report, and every Pending task's explanation with the reasons of the
  first MAX_NODES_IN_CONDITION nodes by name only (all a Phase condition shows; ``why`` computes the
  full list afresh), shared by the tasks that shared it;
* the victim searches the evicting actions ran (the failed-search backoff's input);
* the outcome (status, node, devices) of the decided tasks and of the tasks the request names (the
  replicas placed without a record of their devices or address slot, ``cycle_writes.py``);
* the GPU fragmentation report, when the request says the gauges are due (``gpu_telemetry.py``).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Mapping
from dataclasses import dataclass

from loadmaster.core.columns.snapshot import SnapshotCache
from loadmaster.core.model import Cluster
from loadmaster.cycle import CyclePlan, run_cycle
from loadmaster.placement.diagnosis import Explanation
from loadmaster.placement.gpu_fragmentation_report import GpuFragmentationReport, gpu_fragmentation_report
from loadmaster.runtime.plane.phase_condition import MAX_NODES_IN_CONDITION


@dataclass(frozen=True, slots=True)
class DecideRequest:
    cluster: Cluster
    now_s: float
    outcome_names: frozenset[str] = frozenset()  # tasks whose outcome is wanted besides the decided ones
    gpu_report_due: bool = False


@dataclass(slots=True)
class DecidedCycle:
    plan: CyclePlan  # ``tasks`` holds the outcomes the request asked for; ``snapshot`` is None
    gpu_report: GpuFragmentationReport | None = None


def decide(request: DecideRequest, cache: SnapshotCache) -> DecidedCycle:
    """Run the cycle over the request's cluster; ``cache`` is the previous cycle's (same process)."""
    plan = run_cycle(request.cluster, request.now_s, cache)
    wanted = request.outcome_names | {decision.task for decision in plan.decisions}
    tasks = {name: plan.tasks[name] for name in sorted(wanted) if name in plan.tasks}
    report = None
    if request.gpu_report_due and plan.snapshot is not None:
        report = gpu_fragmentation_report(plan.snapshot)
    explanations = _condition_explanations(plan.explanations)
    kept = CyclePlan(tasks, plan.decisions, explanations, plan.queues, searches=plan.searches)
    return DecidedCycle(kept, report)


def _condition_explanations(explanations: Mapping[str, Explanation]) -> dict[str, Explanation]:
    """Each explanation cut to what a Phase condition shows, once per shared explanation."""
    cut: dict[int, Explanation] = {}
    kept = {}
    for name, explanation in explanations.items():
        short = cut.get(id(explanation))
        if short is None:
            if len(explanation.nodes) <= MAX_NODES_IN_CONDITION:
                short = explanation
            else:
                nodes = dict(heapq.nsmallest(MAX_NODES_IN_CONDITION, explanation.nodes.items()))
                short = dataclasses.replace(explanation, nodes=nodes)
            cut[id(explanation)] = short
        kept[name] = short
    return kept
