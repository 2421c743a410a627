"""Drain: graceful removal of a node (``loadmaster node remove N``), make-before-break for every replica.

The request cordons the node and writes ``status.drain`` (started_at, deadline = start + drain_timeout).
From the store alone (a new leader continues it), this rule, for a draining node N:

* each non-global replica on N (Scheduled or Running, not leaving) without a replacement gets one:
  ``StartReplacement(reason=drain, avoid_nodes=[N], deadline)``, placed by the scheduler by its normal
  rules on the other eligible nodes; the old one keeps running until its own replacement runs, then the
  replacement rule swaps them (``controllers/replacement.py``), each as soon as its replacement runs;
* each global replica on N is dropped (stopped through its agent; the deployment controller creates
  none on a cordoned node);
* a replacement the scheduler could not place (its Phase condition says why): the node's Drain
  condition names the replica (``NoteDrainBlocked``); it keeps running on N meanwhile;
* nothing left on N (placed or stopping): ``CompleteDrain``, the Node is deleted;
* the deadline has come with replicas still on N: ``TimeOutDrain`` naming them. The node stays,
  cordoned, with the reason ``drain_timeout``; the replacement rule removes the replacements that never
  ran (their deadline is the drain's), and the replicas left keep running.

Failed and Succeeded replicas run nothing and hold nothing: they neither move nor hold the drain up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from loadmaster.controllers.changes import (
    Change,
    CompleteDrain,
    NoteDrainBlocked,
    StartReplacement,
    TerminateReplica,
    TimeOutDrain,
)
from loadmaster.controllers.replacement import is_complete
from loadmaster.controllers.views import (
    DRAINING,
    PENDING,
    PLACED_PHASES,
    TERMINATING,
    NodeView,
    ReplicaView,
)

DRAIN = "drain"  # the replacement reason
NODE_DRAINED = "NodeDrained"  # why a global replica on a drained node is stopped


def is_on_node(replica: ReplicaView, node: str) -> bool:
    """Holds ``node`` or is stopping there: the drain waits for it."""
    return replica.node_ref == node and (replica.phase in PLACED_PHASES or replica.phase == TERMINATING)


def reconcile_drain(
    node: NodeView,
    on_node: Sequence[ReplicaView],
    replacements: Mapping[str, ReplicaView],
    now: datetime,
) -> list[Change]:
    """``on_node``: the replicas whose node is ``node``; ``replacements``: the stored replacements by the
    name of the replica they replace."""
    drain = node.drain
    if drain is None or drain.state != DRAINING:
        return []
    staying = sorted((r for r in on_node if is_on_node(r, node.name)), key=lambda r: r.name)
    if not staying:
        return [CompleteDrain(node.name, node.revision)]
    movable = [r for r in staying if r.host is None and not r.is_replacement and not r.is_leaving]
    if now >= drain.deadline:
        # A replacement running at the deadline completes (the replacement rule) rather than aborts.
        stuck = [r for r in movable if not _about_to_swap(replacements.get(r.name))]
        if not stuck:
            return []  # only swaps, global replicas and stops left: they end by themselves
        names = tuple(r.name for r in stuck)
        return [TimeOutDrain(node.name, node.revision, names, _timeout_message(node, stuck, replacements))]
    changes: list[Change] = _blocked(node, movable, replacements)
    for replica in staying:
        if replica.is_leaving or replica.is_replacement:
            continue
        if replica.host is not None:
            message = f"node {node.name} is being removed; its global replica is dropped"
            changes.append(TerminateReplica(replica.name, replica.revision, NODE_DRAINED, message))
        elif replica.name not in replacements:
            changes.append(
                StartReplacement(
                    replica.name,
                    replica.revision,
                    DRAIN,
                    avoid_nodes=(node.name,),
                    deadline=drain.deadline,
                )
            )
    return changes


def _blocked(
    node: NodeView, movable: Sequence[ReplicaView], replacements: Mapping[str, ReplicaView]
) -> list[Change]:
    """The Drain condition names the replicas whose replacement the scheduler could not place (it wrote
    why on the replacement); written again only when that list changes."""
    assert node.drain is not None
    blocked = [
        (r.name, replacement.phase_reason)
        for r in movable
        if (replacement := replacements.get(r.name)) is not None
        and replacement.phase == PENDING
        and replacement.phase_reason is not None
    ]
    if not blocked:
        return []
    names = ", ".join(f"{name} ({reason}: see replicas/{name}.next)" for name, reason in blocked)
    message = (
        f"removing node {node.name}: no other eligible node for the replacement of {names}; they keep "
        f"running on {node.name} until they move or the drain times out at {node.drain.deadline.isoformat()}"
    )
    if message == node.drain.message:
        return []
    return [NoteDrainBlocked(node.name, node.revision, tuple(name for name, _ in blocked), message)]


def _about_to_swap(replacement: ReplicaView | None) -> bool:
    return replacement is not None and is_complete(replacement)


def _timeout_message(
    node: NodeView, stuck: Sequence[ReplicaView], replacements: Mapping[str, ReplicaView]
) -> str:
    def where(replica: ReplicaView) -> str:
        replacement = replacements.get(replica.name)
        if replacement is None:
            return f"{replica.name} (no replacement)"
        on = f" on {replacement.node_ref}" if replacement.node_ref else ""
        return f"{replica.name} (replacement {replacement.phase}{on})"

    assert node.drain is not None
    waited_s = (node.drain.deadline - node.drain.started_at).total_seconds()
    return (
        f"drain of node {node.name} timed out after {waited_s:g}s: {', '.join(map(where, stuck))} did not "
        f"move; the node stays cordoned and they keep running"
    )
