"""Live queue fairness (``GET /api/queue-state``) as ``get queues`` columns and ``describe queue``'s
fairness section: what the queue holds against what it deserves, its fair share and its limit, and
why it was or was not reclaimed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group
from rich.text import Text

from loadmaster.cli.views.columns import Column, Obj, TableContext, key_values, name_of, spec_of
from loadmaster.core.resources import MEMORY, format_quantity

State = Mapping[str, Any]
# dominant_share above this: over its share in some resource, so reclaim may take from it
OVER_SHARE = 1.0


def amounts(values: Mapping[str, int | float] | None, *, keep_zeros: bool = False) -> str:
    """``{cpu: 1.5, memory: 2147483648, gpu: 0}`` -> ``cpu=1.5,memory=2Gi`` (zeros hidden unless kept)."""
    shown = {
        resource: format_quantity(MEMORY, int(value)) if resource == MEMORY else f"{value:g}"
        for resource, value in (values or {}).items()
        if keep_zeros or value
    }
    return key_values(shown)


def _live(context: TableContext, queue: Obj) -> State:
    return context.queue_state.get(name_of(queue), {})


def _figure(figure: str, keep_zeros: bool = False) -> Column:
    def cell(queue: Obj, context: TableContext) -> str:
        live = _live(context, queue)
        if figure in live:
            return amounts(live[figure], keep_zeros=keep_zeros)
        spec_value = spec_of(queue).get(figure)  # no live state (yet): the spec's own figure
        return key_values(spec_value) if spec_value else "-"

    return Column(figure.replace("_", " ").upper(), cell)


def _dominant(queue: Obj, context: TableContext) -> str:
    live = _live(context, queue)
    return f"{live['dominant_share']:.2f}" if "dominant_share" in live else "-"


QUEUE_STATE_COLUMNS = (
    _figure("allocated"),
    _figure("deserved", keep_zeros=True),
    _figure("fair_share"),
    _figure("limit", keep_zeros=True),
    Column("DOMINANT", _dominant),
)


def fairness_section(name: str, state: State) -> Group:
    """``describe queue``'s last section: the fairness breakdown of queue ``name``."""
    queues: Mapping[str, State] = state.get("queues", {})
    live = queues.get(name)
    title = Text(f"Fairness (live, at {state.get('at', '?')}):", style="bold")
    if live is None:
        return Group(title, Text("  not known yet (the queue is new to the scheduler)"))
    share = float(live["dominant_share"])
    verdict = (
        "over its share in some resource: its preemptible jobs may be reclaimed"
        if share > OVER_SHARE
        else "within its share: reclaim does not take from it"
    )
    lines = [
        f"  dominant share:     {share:.2f} ({verdict})",
        f"  over-quota weight:  {live['over_quota_weight']:g} (its part of what siblings leave unused)",
        f"  deserved:           {amounts(live['deserved'], keep_zeros=True)}",
        f"  fair share:         {amounts(live['fair_share'])}",
        f"  allocated:          {amounts(live['allocated'])}"
        f" (non-preemptible: {amounts(live.get('allocated_non_preemptible'))})",
        f"  limit:              {amounts(live['limit'], keep_zeros=True) if live['limit'] else 'none'}",
    ]
    if live.get("requested") is not None:
        lines.append(f"  requested:          {amounts(live['requested'])} (its subtree's demand)")
    siblings = [
        f"{sibling} ({queues[sibling]['dominant_share']:.2f})" for sibling in live.get("siblings", [])
    ]
    lines.append(f"  siblings:           {', '.join(siblings) if siblings else 'none'} (dominant shares)")
    reclaim = live.get("last_reclaim")
    if reclaim:
        where = f"{reclaim['replica']} on {reclaim['node']}"
        lines.append(f"  last reclaim:       {reclaim['at']}: {where}: {reclaim['message']}")
    else:
        lines.append("  last reclaim:       none recorded")
    return Group(title, *(Text(line) for line in lines))
