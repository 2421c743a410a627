"""What ``why`` says about stickiness (AVA C9): where a replica ran before, and what keeps it on its node.

``status.previous_node_ref`` is recorded on every re-placement: a return to Pending (node lost or
deleted, a restart elsewhere), a replacement ``X.next`` (X's node), a restart in place (its own node).
A Pending replica is placed on it when it passes the replica's filters (the engine's stickiness); a
placed replica on it was kept there. A replica with an ephemeral volume is pinned to the node that has
the volume while it can run there: it goes back there first and is never moved voluntarily
(``core/voluntary_moves.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadmaster.core.resources import MEMORY, format_quantity, parse_quantity


def ephemeral_volumes(spec: Mapping[str, Any]) -> list[str]:
    """The replica's ephemeral volume claims, each as ``labels size`` (``type=ssd 10Gi``)."""
    described = []
    for claim in spec.get("volumes", []) or []:
        if not claim.get("ephemeral"):
            continue
        labels = ",".join(f"{k}={v}" for k, v in sorted((claim.get("match_labels") or {}).items()))
        size = format_quantity(MEMORY, parse_quantity(MEMORY, claim["size"]))
        described.append(f"{labels or 'any'} {size}")
    return described


def stickiness_of(spec: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any] | None:
    """``why``'s ``sticky`` entry: the node it sticks to, the reasons and a sentence; None when nothing
    ties the replica to a node."""
    node, previous = status.get("node_ref"), status.get("previous_node_ref")
    volumes = ephemeral_volumes(spec)
    holds = [f"holds volume {volume}" for volume in volumes]
    if node is None:
        if not previous:
            return None
        because = ["previous node", *holds]
        message = (
            f"previous node {previous} ({' / '.join(because)}): placed there again if it passes the "
            "replica's filters, elsewhere otherwise"
        )
        return {"node": previous, "because": because, "message": message}
    because = (["previous node"] if previous == node else []) + holds
    if not because:
        return None
    message = f"kept on node {node}: {' / '.join(because)}"
    if volumes:
        message += " (never moved voluntarily while it can run there)"
    return {"node": node, "because": because, "message": message}
