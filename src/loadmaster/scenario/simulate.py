"""``loadmaster simulate``: one cycle over a scenario file, as the spec's JSON, and the expect check."""

from __future__ import annotations

from typing import Any

from loadmaster.core.columns.snapshot import SnapshotError
from loadmaster.cycle import CyclePlan, run_cycle
from loadmaster.scenario.schema import Scenario, ScenarioError


def expect_mismatches(scenario: Scenario, plan: CyclePlan) -> list[str]:
    """One line per task whose outcome differs from ``expect`` (empty when it holds)."""
    mismatches = []
    for name, expected in (scenario.expect or {}).items():
        got = plan.tasks[name]
        if got.status != expected.status.value or (expected.node is not None and got.node != expected.node):
            want = expected.status.value + (f" on {expected.node}" if expected.node else "")
            have = got.status + (f" on {got.node}" if got.node else "")
            mismatches.append(f"{name}: expected {want}, got {have}")
        if expected.devices is not None and got.devices != expected.devices:
            mismatches.append(f"{name}: expected devices {list(expected.devices)}, got {list(got.devices)}")
        if expected.rejected is not None:
            explanation = plan.explanations.get(name)
            summary = {str(k): v for k, v in (explanation.summary if explanation else {}).items()}
            if summary != expected.rejected:
                mismatches.append(f"{name}: expected rejected {expected.rejected}, got {summary}")
    return mismatches


def plan_to_json(scenario: Scenario, plan: CyclePlan) -> dict[str, Any]:
    tasks: dict[str, dict[str, Any]] = {}
    for name, outcome in plan.tasks.items():
        entry: dict[str, Any] = {"status": outcome.status, "node": outcome.node}
        if outcome.devices:
            entry["devices"] = list(outcome.devices)
        tasks[name] = entry
    out: dict[str, Any] = {
        "scenario": scenario.name,
        "tasks": tasks,
        "decisions": [d.to_json() for d in plan.decisions],
        "explanations": {name: e.to_json() for name, e in plan.explanations.items()},
        "queues": plan.queues,
    }
    if scenario.expect is not None:
        mismatches = expect_mismatches(scenario, plan)
        out["expect"] = {"passed": not mismatches, "mismatches": mismatches}
    return out


def simulate(scenario: Scenario) -> tuple[CyclePlan, dict[str, Any]]:
    """Raises ScenarioError (with the YAML path of the task) when the input's Running tasks cannot be
    placed as it says: the loader checks each node's totals, the snapshot its GPU devices and pools."""
    try:
        plan = run_cycle(scenario.cluster)
    except SnapshotError as error:
        if error.task is None:
            raise
        raise ScenarioError(task_path(scenario, error.task), str(error)) from None
    return plan, plan_to_json(scenario, plan)


def task_path(scenario: Scenario, name: str) -> str:
    """Where the task is in the file: ``jobs[j].tasks[k]`` (jobs and tasks keep the file's order)."""
    for j, job in enumerate(scenario.cluster.jobs):
        for k, task in enumerate(job.tasks):
            if task.name == name:
                return f"jobs[{j}].tasks[{k}]"
    return f"task {name}"
