"""The queues report (``queues.report``) as a plain-text table, for ``simulate --explain``.

One row per queue, children indented under their parent, so a user can read across a row why the
queue gets what it gets: what it deserves, what fair share that turned into, what it holds, and how
close it is to its share (dominant share; above 1 = over its share, reclaimable).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadmaster.core.resources import MEMORY, format_quantity

COLUMNS = ("queue", "priority", "weight", "deserved", "fair share", "allocated", "limit", "dominant share")


def queues_table(report: Mapping[str, Mapping[str, Any]]) -> str:
    """Render ``queues_report(...)`` as aligned text lines (no trailing newline)."""
    rows = [COLUMNS]
    for name in _tree_order(report):
        entry = report[name]
        rows.append(
            (
                "  " * _depth(report, name) + name,
                str(entry["priority"]),
                f"{entry['over_quota_weight']:g}",
                _amounts(entry["deserved"], governed=True),
                _amounts(entry["fair_share"]),
                _amounts(entry["allocated"]),
                _amounts(entry["limit"], governed=True) if entry["limit"] else "none",
                f"{entry['dominant_share']:.2f}",
            )
        )
    widths = [max(len(row[c]) for row in rows) for c in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def _amounts(amounts: Mapping[str, int | float], governed: bool = False) -> str:
    """Governed quotas show every entry (a deserved 0 is a statement); shares and usage hide zeros."""
    shown = [f"{name} {_number(name, value)}" for name, value in amounts.items() if governed or value]
    return ", ".join(shown) if shown else "-"


def _number(resource: str, value: int | float) -> str:
    if resource == MEMORY:
        return format_quantity(MEMORY, int(value))
    return f"{value:g}"


def _depth(report: Mapping[str, Mapping[str, Any]], name: str) -> int:
    depth, parent = 0, report[name]["parent"]
    while parent is not None:
        depth, parent = depth + 1, report[parent]["parent"]
    return depth


def _tree_order(report: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Depth first, each parent before its children; siblings in report (age) order."""
    order: list[str] = []

    def visit(parent: str | None) -> None:
        for name, entry in report.items():
            if entry["parent"] == parent:
                order.append(name)
                visit(name)

    visit(None)
    return order
