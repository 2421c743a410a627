"""``loadmaster simulate``: one cycle over a scenario file, as the spec's JSON, and the expect check."""

from __future__ import annotations

from typing import Any

from loadmaster.cycle import CyclePlan, run_cycle
from loadmaster.scenario.schema import Scenario


def expect_mismatches(scenario: Scenario, plan: CyclePlan) -> list[str]:
    """One line per task whose outcome differs from ``expect`` (empty when it holds)."""
    mismatches = []
    for name, expected in (scenario.expect or {}).items():
        got = plan.tasks[name]
        if got.status != expected.status.value or (expected.node is not None and got.node != expected.node):
            want = expected.status.value + (f" on {expected.node}" if expected.node else "")
            have = got.status + (f" on {got.node}" if got.node else "")
            mismatches.append(f"{name}: expected {want}, got {have}")
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
    plan = run_cycle(scenario.cluster)
    return plan, plan_to_json(scenario, plan)
