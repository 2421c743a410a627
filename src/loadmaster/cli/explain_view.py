"""Readable tables for ``simulate --explain``: placements, decisions, and why each pending task waits."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from loadmaster.cycle import CyclePlan
from loadmaster.scenario.schema import Scenario


def print_explanation(scenario: Scenario, plan: CyclePlan, output: dict[str, Any]) -> None:
    console = Console(soft_wrap=False, width=140)
    console.print(f"[bold]scenario[/bold] {scenario.name}")
    tasks = Table(title="tasks after one cycle", title_justify="left")
    for column in ("task", "status", "node", "devices"):
        tasks.add_column(column)
    for name, outcome in plan.tasks.items():
        tasks.add_row(name, outcome.status, outcome.node or "-", ",".join(map(str, outcome.devices)) or "-")
    console.print(tasks)
    if plan.decisions:
        decisions = Table(title="decisions", title_justify="left")
        for column in ("action", "kind", "task", "node", "reason"):
            decisions.add_column(column)
        for d in plan.decisions:
            node = f"{d.from_node} -> {d.node}" if d.from_node else d.node
            decisions.add_row(d.action, d.kind, d.task, node, d.reason or "")
        console.print(decisions)
    if "queues" in output:
        _print_queues(console, output["queues"])
    for name, explanation in plan.explanations.items():
        counts = (
            ", ".join(f"{k} {v}" for k, v in sorted(explanation.summary.items())) or "no node rejected it"
        )
        console.print(f"\n[bold]{name}[/bold] is Pending: {counts}")
        if explanation.reason:
            console.print(f"  reason: {explanation.reason}")
        for hint in explanation.hints:
            console.print(f"  hint: {hint}")
        nodes = Table(show_header=True, box=None, padding=(0, 2))
        nodes.add_column("node")
        nodes.add_column("why not")
        for node, message in explanation.nodes.items():
            nodes.add_row(node, message)
        if explanation.nodes:
            console.print(nodes)
    if plan.not_run:
        console.print(f"\nactions not run in this build: {', '.join(plan.not_run)}")
    expect = output.get("expect")
    if expect is not None:
        verdict = "[green]holds[/green]" if expect["passed"] else "[red]does not hold[/red]"
        console.print(f"\nexpect {verdict}")
        for line in expect["mismatches"]:
            console.print(f"  {line}")


def _print_queues(console: Console, queues: dict[str, dict[str, Any]]) -> None:
    table = Table(title="queues", title_justify="left")
    columns = ("queue", "parent", "priority", "deserved", "fair_share", "allocated", "dominant_share",
               "over_quota_weight", "limit")  # fmt: skip
    for column in columns:
        table.add_column(column)

    def show(value: Any) -> str:
        if isinstance(value, dict):
            return (
                ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in value.items())
                or "-"
            )
        if isinstance(value, float):
            return f"{value:.3f}"
        return "-" if value is None else str(value)

    for name, row in queues.items():
        table.add_row(name, *(show(row.get(c)) for c in columns[1:]))
    console.print(table)
