"""Writing many changes as few fenced transactions of at most MAX_TXN_OPS operations each.

Callers hand over *groups* of operations that must land together (one replica's update, an object
and its replicas...). Groups are packed into transactions in order. When a compare fails, the
transaction is refused as a whole (the store's all-or-nothing rule), so the group holding the
conflicting key is set aside (its author re-reads and tries again later) and the rest is retried at
once. A transaction holds at most MAX_TXN_OPS operations, and MAX_TXN_OPS - 1 with a fence (etcd
counts the fence's compare against the same limit). A fence failure means this server no longer
leads: nothing more is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from loadmaster.store.interface import MAX_TXN_OPS, ConflictError, Fence, Op, Store

Tag = TypeVar("Tag")


@dataclass(frozen=True, slots=True)
class WriteGroup(Generic[Tag]):
    tag: Tag  # what the caller calls this group (a replica name ...)
    ops: tuple[Op, ...]


@dataclass(slots=True)
class WriteOutcome(Generic[Tag]):
    revision: int = 0  # the last revision written (0: nothing was)
    written: list[Tag] = field(default_factory=list)
    conflicts: list[Tag] = field(default_factory=list)
    transactions: int = 0  # how many transactions were committed


# The extra operations of one transaction (its audit entries), computed from the groups it carries.
Extras = Callable[[Sequence[WriteGroup[Tag]]], list[Op]]


def pack(groups: Sequence[WriteGroup[Tag]], room: int) -> list[list[WriteGroup[Tag]]]:
    """Consecutive groups into batches of at most ``room`` operations (a larger group is refused)."""
    batches: list[list[WriteGroup[Tag]]] = []
    current: list[WriteGroup[Tag]] = []
    size = 0
    for group in groups:
        if len(group.ops) > room:
            raise ValueError(f"group {group.tag!r} has {len(group.ops)} ops; a transaction holds {room}")
        if size + len(group.ops) > room:
            batches.append(current)
            current, size = [], 0
        current.append(group)
        size += len(group.ops)
    if current:
        batches.append(current)
    return batches


async def write_groups(
    store: Store,
    groups: Sequence[WriteGroup[Tag]],
    fence: Fence | None,
    *,
    extras: Extras[Tag] | None = None,
    extras_room: int = 0,
) -> WriteOutcome[Tag]:
    """Write every group that does not conflict; ``extras`` adds up to ``extras_room`` ops per txn.

    Raises FencedError (nothing more written) when ``fence`` no longer holds, and ConflictError when
    a conflict is on a key outside every group (an extra op: the caller's bookkeeping is wrong).
    """
    outcome: WriteOutcome[Tag] = WriteOutcome()
    # The fence is a compare too, and etcd counts compares against the same limit as ops.
    room = MAX_TXN_OPS - extras_room - (1 if fence is not None else 0)
    for batch in pack(groups, room):
        remaining = list(batch)
        while remaining:
            ops = [op for group in remaining for op in group.ops]
            extra_ops = extras(remaining) if extras is not None else []
            if len(extra_ops) > extras_room:
                raise ValueError(f"extras gave {len(extra_ops)} ops; {extras_room} were reserved")
            try:
                outcome.revision = await store.txn([*ops, *extra_ops], fence)
                outcome.transactions += 1
            except ConflictError as conflict:
                culprit = next((g for g in remaining if any(op.key == conflict.key for op in g.ops)), None)
                if culprit is None:
                    raise
                remaining.remove(culprit)
                outcome.conflicts.append(culprit.tag)
                continue
            outcome.written.extend(group.tag for group in remaining)
            break
    return outcome
