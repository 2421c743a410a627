"""``simulate --explain`` for a timeline: one line per event (time, object, what happened and why), with
each ``expect`` and each refused step in its place, and the verdict last."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape

from loadmaster.scenario.fields import as_duration_s

# Event fields that name the object an event is about, most specific first.
_OBJECT_FIELDS = ("replica_id", "node", "deployment", "job", "queue", "worker_template", "object")


def _seconds(text: str) -> float:
    """A step's ``at`` as written ("12s", "24m59s", "2h"), in seconds, for ordering."""
    return as_duration_s(text, "at")


def _object(event: Mapping[str, Any]) -> str:
    for field in _OBJECT_FIELDS:
        if event.get(field):
            return str(event[field])
    return ""


def timeline_lines(output: Mapping[str, Any]) -> list[tuple[float, int, str]]:
    """(time, order, line) for every event, expect and error; sorted, they read as the run went."""
    lines: list[tuple[float, int, str]] = []
    for event in output["events"]:
        message = event.get("message") or event.get("type")
        lines.append((_seconds(event["at"]), 0, f"{event['at']:>10}  {_object(event):<24} {message}"))
    for error in output["errors"]:
        lines.append(
            (_seconds(error["at"]), 1, f"{error['at']:>10}  {error['step']:<24} refused: {error['error']}")
        )
    for step in output["steps"]:
        verdict = step["expect"]
        if verdict["passed"]:
            lines.append((_seconds(step["at"]), 2, f"{step['at']:>10}  {'expect':<24} passed"))
        else:
            lines.append((_seconds(step["at"]), 2, f"{step['at']:>10}  {'expect':<24} FAILED"))
            lines += [(_seconds(step["at"]), 2, f"{'':>10}  {'':<24}   {m}") for m in verdict["mismatches"]]
    return lines


def print_timeline(output: Mapping[str, Any], console: Console | None = None) -> None:
    console = console or Console(highlight=False, soft_wrap=True)
    console.print(f"[bold]timeline {escape(str(output['timeline']))}[/bold]")
    for _, _, line in sorted(timeline_lines(output), key=lambda item: (item[0], item[1])):
        console.print(escape(line))
    verdict = output["expect"]
    if verdict["passed"]:
        console.print("[green]every expect held[/green]")
    else:
        console.print(f"[red]{len(verdict['mismatches'])} mismatch(es)[/red]")
