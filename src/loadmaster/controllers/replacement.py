"""Replacements (make-before-break): complete one whose new incarnation runs, give up one that is late.

A replacement of replica X is an ordinary replica stored as ``X.next`` with ``spec.replaces: X``
(``StartReplacement``; drain, rollouts and moves start them). This rule, over every replacement:

* X is gone or going away (scaled down, its owner deleted, stopped): the replacement has nothing left
  to replace and is removed (``AbortReplacement``, reason ``replaced_gone``); the owner's controller
  decides about the slot as it would without it.
* the replacement is Running and healthy: ``CompleteReplacement``, ONE transaction that deletes X and
  moves the replacement's object to the key X (same incarnation, same status). X's agent sees its
  incarnation unassigned and stops it; the replacement's agent adopts it under the name X.
* its deadline (``spec.replacement_deadline``) has passed: ``AbortReplacement`` with the reason the
  replacement's starter gave a late replacement (``drain`` -> ``drain_timeout``, ``rollout`` ->
  ``step_timeout``, otherwise ``deadline``). X keeps running.

Completion wins over the deadline: a replacement Running at its deadline has done its job. The rule is
level-triggered and pure; the deadline is a timer of the controller loop, not a tick.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from loadmaster.controllers.changes import AbortReplacement, Change, CompleteReplacement
from loadmaster.controllers.views import RUNNING, ReplicaView

# The abort reason of a replacement that missed its deadline, by why it was started.
TIMEOUT_REASONS: Mapping[str, str] = {"drain": "drain_timeout", "rollout": "step_timeout"}
DEADLINE = "deadline"
REPLACED_GONE = "replaced_gone"


def is_complete(replacement: ReplicaView) -> bool:
    """The new incarnation is Running and healthy: the old one may stop."""
    return replacement.phase == RUNNING and replacement.healthy


def reconcile_replacements(
    replacements: Iterable[ReplicaView], replicas: Mapping[str, ReplicaView], now: datetime
) -> list[Change]:
    """``replacements``: the replacements to look at; ``replicas``: the replicas they replace, by name
    (a missing name is a replica that no longer exists)."""
    changes: list[Change] = []
    for replacement in sorted(replacements, key=lambda r: r.name):
        old_name = replacement.replaces
        if old_name is None or replacement.is_leaving:
            continue
        reason = replacement.replacement_reason or ""
        old = replicas.get(old_name)
        if old is None or old.is_leaving:
            message = f"replica {old_name} is gone or going away; its replacement is not needed"
            changes.append(AbortReplacement(old_name, replacement.revision, REPLACED_GONE, message))
        elif is_complete(replacement):
            changes.append(
                CompleteReplacement(
                    old_name, old.revision, replacement.revision, reason, old.node_ref, replacement.node_ref
                )
            )
        elif replacement.replacement_deadline is not None and replacement.replacement_deadline <= now:
            late = TIMEOUT_REASONS.get(reason, DEADLINE)
            where = f" on node {replacement.node_ref}" if replacement.node_ref else ", never placed"
            message = (
                f"replacement of {old_name} ({reason}) not Running by its deadline "
                f"{replacement.replacement_deadline.isoformat()}: {replacement.phase}{where}; "
                f"{old_name} keeps running"
            )
            changes.append(AbortReplacement(old_name, replacement.revision, late, message))
    return changes
