"""Readable tables for ``simulate --explain``: placements, decisions, and why each pending task waits."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from loadmaster.cli.views.queue_report import queues_table
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
    if output.get("queues"):
        console.print("[bold]queues[/bold]")
        console.print(queues_table(output["queues"]), markup=False, highlight=False)
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
    expect = output.get("expect")
    if expect is not None:
        verdict = "[green]holds[/green]" if expect["passed"] else "[red]does not hold[/red]"
        console.print(f"\nexpect {verdict}")
        for line in expect["mismatches"]:
            console.print(f"  {line}")
