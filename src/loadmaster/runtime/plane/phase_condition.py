"""The ``Phase`` condition every placement attempt writes on a replica (CARA A6), and its text.

One condition of type ``Phase`` is kept (replaced on each attempt, so the list does not grow):
``status`` "True" once Scheduled, else "False"; ``reason`` a CamelCase word (Scheduled, Unschedulable,
BackOff, Pipelined, ...) or JACO's ``cannot_satisfy_host_placement``; ``message`` one line a person
can act on (the explanation's counts and its first hint); ``details`` what ``why`` shows: attempts,
next_attempt_at, the summary, hints, and the reasons of a few nodes.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.placement.diagnosis import Explanation

PHASE = "Phase"
# A condition holds the reasons of this many nodes; ``why`` computes the full list afresh.
MAX_NODES_IN_CONDITION = 10


def phase_condition_of(status: Mapping[str, Any]) -> dict[str, Any] | None:
    for condition in status.get("conditions", []) or []:
        if isinstance(condition, dict) and condition.get("type") == PHASE:
            return condition
    return None


def with_phase_condition(status: Mapping[str, Any], condition: dict[str, Any]) -> list[dict[str, Any]]:
    """The status's conditions with its Phase condition replaced by ``condition``."""
    others = [
        c for c in status.get("conditions", []) or [] if not (isinstance(c, dict) and c.get("type") == PHASE)
    ]
    return [*others, condition]


def phase_condition(
    satisfied: bool, reason: str, message: str, now: datetime, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    condition: dict[str, Any] = {
        "type": PHASE,
        "status": "True" if satisfied else "False",
        "reason": reason,
        "message": message,
        "last_transition_time": format_timestamp(now),
    }
    if details:
        condition["details"] = details
    return condition


def explanation_message(explanation: Explanation, node_count: int) -> str:
    """``0/5 nodes can take it: 3 capacity, 2 selector; hint: node-3 needs 512Mi less memory``.

    Ordered for a person: the filters that block it first (per category, with counts), then what the
    actions tried (``then reclaim: no victim set lets it fit``), then a hint. When no node passes the
    filters, what an eviction action could not do adds nothing and is left to ``why``."""
    rejected = sum(explanation.summary.values())
    counts = ", ".join(
        f"{count} {category}"
        for category, count in sorted(explanation.summary.items(), key=lambda item: (-item[1], item[0]))
    )
    text = f"{node_count - rejected}/{node_count} nodes can take it"
    if counts:
        text += f": {counts}"
    if explanation.reason and (rejected < node_count or not _is_action_reason(explanation.reason)):
        text += f"; then {explanation.reason}"
    if explanation.hints:
        text += f"; hint: {explanation.hints[0]}"
    return text


def _is_action_reason(reason: str) -> bool:
    """``reclaim: ...``, ``consolidate: ...``: an eviction action's account, not a filter's."""
    return reason.split(" ", 1)[0].endswith(":")


def explanation_details(explanation: Explanation) -> dict[str, Any]:
    nodes = dict(heapq.nsmallest(MAX_NODES_IN_CONDITION, explanation.nodes.items()))  # no sort of 5,000
    details: dict[str, Any] = {
        "summary": dict(explanation.summary),
        "nodes": nodes,
        "hints": list(explanation.hints),
    }
    if explanation.reason:
        details["reason"] = explanation.reason
    return details
