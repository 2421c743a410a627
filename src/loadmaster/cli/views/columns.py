"""A table as a list of columns: a header and how to read the cell from one object (and a shared context)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rich import box
from rich.table import Table

from loadmaster.placement.gpu_fragmentation_report import NodeGpuFragmentation

Obj = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TableContext:
    """What cells need besides their own object: the time ages are measured to, and the replicas (for
    the node usage and workload count columns) and the nodes' GPU fragmentation (``-o wide``)."""

    now: datetime
    replicas: Sequence[Obj] = ()
    used: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    gpu: Mapping[str, NodeGpuFragmentation] = field(default_factory=dict)
    queue_state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # GET /api/queue-state


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    cell: Callable[[Obj, TableContext], str]
    wide_only: bool = False
    # Free text (messages, label lists) wraps inside its cell when the page is narrow, so that names
    # and phases, which never wrap, keep their full width.
    free_text: bool = False


def build_table(
    columns: Sequence[Column], objects: Sequence[Obj], context: TableContext, wide: bool, headers: bool = True
) -> Table:
    """A borderless table like ``kubectl get`` prints: upper-case headers, one object per row."""
    shown = [column for column in columns if wide or not column.wide_only]
    table = Table(
        box=box.SIMPLE_HEAD if headers else None,
        show_header=headers,
        show_edge=False,
        pad_edge=False,
        header_style="bold",
    )
    for column in shown:
        table.add_column(column.header, no_wrap=not column.free_text)
    for obj in objects:
        table.add_row(*(column.cell(obj, context) for column in shown))
    return table


def name_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def spec_of(obj: Obj) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def status_of(obj: Obj) -> Mapping[str, Any]:
    status = obj.get("status")
    return status if isinstance(status, Mapping) else {}


def key_values(mapping: object) -> str:
    """``{zone: a, tier: gpu}`` -> ``tier=gpu,zone=a`` (sorted, so rows compare), ``-`` when empty."""
    if not isinstance(mapping, Mapping) or not mapping:
        return "-"
    return ",".join(f"{key}={value}" for key, value in sorted(mapping.items()))
