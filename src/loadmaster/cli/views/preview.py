"""``preview``'s tables: for each replica the ranked candidates with every scorer's contribution, the
nodes that were rejected and why, and how full the chosen node would be afterwards."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

DEFAULT_TOP = 10
# What the server's preview takes as given (runtime/scheduling/preview/preview.py), said before its answer.
ASSUMED = (
    "assuming the files are applied now: unchanged services keep their replicas (same names, same nodes), "
    "a changed service's replicas are replaced by new ones while the old ones still hold their nodes, "
    "and no other Pending replica is placed first:"
)


_LEFT = frozenset({"NODE", "REASON", "REPLICA", "KIND", "TO", "QUEUE", "ACTION", "WHY"})
_WRAPPED = frozenset({"REASON", "WHY"})


def _table(*headers: str) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for header in headers:
        if header in _LEFT:
            table.add_column(header, no_wrap=header not in _WRAPPED)
        else:
            table.add_column(header, no_wrap=True, justify="right")
    return table


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return str(value)


def candidates_table(candidates: Sequence[Mapping[str, Any]], top: int) -> Table:
    """Rank, node, total, then one column per scorer (the union over candidates, sorted by name). Scores
    are parts of a 0..100 total; an order scorer (``ranked_by``, e.g. rendezvous) shows a rank."""
    scorers = sorted({name for candidate in candidates for name in (candidate.get("scores") or {})})
    ranked = {name for candidate in candidates for name in candidate.get("ranked_by") or ()}
    total = "TOTAL (RANK)" if ranked else "TOTAL (0-100)"
    headers = (f"{scorer.upper()} RANK" if scorer in ranked else scorer.upper() for scorer in scorers)
    table = _table("RANK", "NODE", total, *headers)
    for rank, candidate in enumerate(candidates[:top], start=1):
        scores = candidate.get("scores") or {}
        table.add_row(
            str(rank),
            str(candidate.get("node", "?")),
            _number(candidate.get("total", "-")),
            *(_number(scores.get(scorer, "-")) for scorer in scorers),
        )
    return table


def disruptions_table(entries: Sequence[Mapping[str, Any]]) -> Table:
    """One row per eviction or move: the replica, what happens to it, where, its queue and why."""
    table = _table("REPLICA", "KIND", "NODE", "TO", "QUEUE", "ACTION", "WHY")
    for entry in entries:
        table.add_row(
            str(entry.get("replica", "?")),
            str(entry.get("kind", "?")),
            str(entry.get("from", "-")),
            str(entry.get("to", "-")),
            str(entry.get("queue", "-")),
            str(entry.get("action", "-")),
            str(entry.get("why", "")),
        )
    return table


def _percent(ratio: object) -> str:
    return f"{float(ratio) * 100:.0f}%" if isinstance(ratio, int | float) else "-"


def forecast_table(forecast: Mapping[str, Any]) -> Table:
    resources = sorted(
        {resource for ratios in forecast.values() if isinstance(ratios, Mapping) for resource in ratios}
    )
    table = _table("NODE", *(resource.upper() for resource in resources))
    for node, given in sorted(forecast.items()):
        ratios = given if isinstance(given, Mapping) else {}
        table.add_row(str(node), *(_percent(ratios.get(resource)) for resource in resources))
    return table


def item_view(item: Mapping[str, Any], top: int = DEFAULT_TOP) -> RenderableType:
    replica, node = item.get("replica", "?"), item.get("node")
    if item.get("stays"):
        return Text.assemble(("replica ", ""), (str(replica), "bold"), f" stays on node {node} (unchanged)")
    candidates = item.get("candidates") or []
    if node and item.get("pipelined"):
        verdict = f"would go to node {node} once the replicas evicted or moved off it are gone"
    elif node:
        verdict = f"would go to node {node}"
    elif candidates:
        verdict = f"would not be placed, although {len(candidates)} node(s) fit (see the reason)"
    else:
        verdict = "would not be placed (no node fits)"
    parts: list[RenderableType] = [Text.assemble(("replica ", ""), (str(replica), "bold"), f" {verdict}")]
    if item.get("warning"):
        parts.append(Text(f"warning: {item['warning']}", style="bold"))
    if item.get("reason"):
        parts.append(Text(f"reason: {item['reason']}"))
    if candidates:
        shown = f"top {top} of {len(candidates)}" if len(candidates) > top else str(len(candidates))
        parts += [Text(f"candidates ({shown}), best first:"), candidates_table(candidates, top)]
    rejections = item.get("rejections") or {}
    summary = rejections.get("summary") or {}
    if summary:
        counts = ", ".join(f"{category} {count}" for category, count in sorted(summary.items()))
        parts.append(Text(f"rejected: {counts}"))
        reasons = _table("NODE", "REASON")
        for rejected, reason in sorted((rejections.get("nodes") or {}).items()):
            reasons.add_row(str(rejected), str(reason))
        parts.append(reasons)
    parts.extend(Text(f"  hint: {hint}") for hint in rejections.get("hints") or [])
    if item.get("depends_on"):
        parts += [Text(f"makes room on {node} by:"), disruptions_table(item["depends_on"])]
    forecast = item.get("forecast") or {}
    if forecast:
        parts += [Text("utilisation after placement:"), forecast_table(forecast)]
    return Group(*parts)


def preview_view(result: Mapping[str, Any], top: int = DEFAULT_TOP) -> RenderableType:
    items = result.get("items") or []
    if not items:
        return Text("nothing to place: the manifests create no replicas")
    views: list[RenderableType] = [Text(ASSUMED)]
    for item in items:
        views += [Text(""), item_view(item, top)]
    victims, moves = result.get("victims") or [], result.get("moves") or []
    for entries, verb in ((victims, "evict"), (moves, "move")):
        if entries:
            heading = Text(f"the cycle would {verb} {len(entries)} replica(s):")
            views += [Text(""), heading, disruptions_table(entries)]
    if not victims and not moves:
        views += [Text(""), Text("the cycle would evict or move no running replica")]
    return Group(*views)
