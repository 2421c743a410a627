"""The rules every backend applies to a write transaction, in one place so the backends cannot drift.

A transaction is decided in two steps, with nothing written until both pass:

1. ``validate_txn``: the request itself is well formed (types, size, no repeated key). It needs no
   store state, so backends run it before taking any lock or hopping to a writer thread.
2. ``plan_txn``: given the current revisions of the touched keys, check the fence, then every
   compare (all of them before any op is applied), and return the events the write produces.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

from loadmaster.store.interface import (
    MAX_TXN_OPS,
    ConflictError,
    Delete,
    Event,
    Fence,
    FencedError,
    Op,
    Put,
    TxnTooLargeError,
)
from loadmaster.store.keys import check_key


def _check_expect_revision(expect: object, field: str) -> None:
    # bool is an int subclass; True as a revision is always a caller bug, so refuse it.
    if expect is None:
        return
    if isinstance(expect, bool) or not isinstance(expect, int):
        raise TypeError(f"{field}: expect_revision must be an int or None, got {type(expect).__name__}")
    if expect < 0:
        raise ValueError(f"{field}: expect_revision must be >= 0, got {expect}")


def validate_fence(fence: object, field: str = "fence") -> None:
    """Raise naming ``field`` unless ``fence`` is None or a well-formed Fence."""
    if fence is None:
        return
    if not isinstance(fence, Fence):
        raise TypeError(f"{field}: must be a Fence or None, got {type(fence).__name__}")
    check_key(fence.key, f"{field}.key")
    if isinstance(fence.create_revision, bool) or not isinstance(fence.create_revision, int):
        kind = type(fence.create_revision).__name__
        raise TypeError(f"{field}.create_revision: must be an int, got {kind}")
    if fence.create_revision < 1:
        raise ValueError(f"{field}.create_revision: must be >= 1, got {fence.create_revision}")


def validate_txn(ops: Sequence[Op], fence: Fence | None) -> None:
    """Raise TxnTooLargeError, TypeError or ValueError (naming ``ops[i].field``) for a malformed txn."""
    if isinstance(ops, str | bytes) or not isinstance(ops, Sequence):
        raise TypeError(f"ops: must be a sequence of Put/Delete, got {type(ops).__name__}")
    if len(ops) > MAX_TXN_OPS:
        raise TxnTooLargeError(
            f"ops: {len(ops)} operations in one txn; at most {MAX_TXN_OPS} are allowed (etcd's --max-txn-ops)"
        )
    seen: set[str] = set()
    for index, op in enumerate(ops):
        field = f"ops[{index}]"
        if not isinstance(op, Put | Delete):
            raise TypeError(f"{field}: must be a Put or a Delete, got {type(op).__name__}")
        check_key(op.key, f"{field}.key")
        if isinstance(op, Put) and not isinstance(op.value, bytes):
            # Only immutable bytes: a stored bytearray could be changed behind the store's back.
            raise TypeError(f"{field}.value: must be bytes, got {type(op.value).__name__}")
        _check_expect_revision(op.expect_revision, f"{field}.expect_revision")
        if op.key in seen:
            raise ValueError(f"{field}.key: {op.key!r} appears more than once in the txn")
        seen.add(op.key)
    validate_fence(fence)
    # etcd counts compares against the same limit, so every backend does: a fenced txn may compare
    # at most 127 keys, and code that passes on SQLite then passes on etcd too.
    compares = sum(op.expect_revision is not None for op in ops) + (fence is not None)
    if compares > MAX_TXN_OPS:
        raise TxnTooLargeError(
            f"ops: {compares} compares in one txn (expect_revision checks plus the fence); "
            f"at most {MAX_TXN_OPS} are allowed (etcd's --max-txn-ops), so a fenced txn may compare "
            f"at most {MAX_TXN_OPS - 1} keys"
        )


def check_fence(fence: Fence | None, fence_key_create_revision: int | None) -> None:
    """Raise FencedError unless the fence key exists with the fence's create_revision."""
    if fence is None or fence_key_create_revision == fence.create_revision:
        return
    found = (
        "it does not exist"
        if fence_key_create_revision is None
        else (f"it has create_revision {fence_key_create_revision}")
    )
    raise FencedError(
        f"fence {fence.key!r}: expected create_revision {fence.create_revision}, but {found}; "
        "leadership was lost, nothing was written"
    )


def plan_txn(
    ops: Sequence[Op],
    fence: Fence | None,
    mod_revisions: Mapping[str, int],
    fence_key_create_revision: int | None,
    next_revision: int,
) -> list[Event]:
    """Check the fence and every compare, then return the txn's events in op order.

    ``mod_revisions`` maps each existing touched key to its mod_revision (a missing key counts as 0,
    which is what ``expect_revision=0`` asks for). The first failing compare in op order is reported.
    Deleting a missing key produces no event; an empty event list means the txn changes nothing and,
    as in etcd, must not bump the store revision.
    """
    check_fence(fence, fence_key_create_revision)
    for op in ops:
        if op.expect_revision is not None:
            actual = mod_revisions.get(op.key, 0)
            if actual != op.expect_revision:
                raise ConflictError(op.key, op.expect_revision, actual)
    events: list[Event] = []
    for op in ops:
        if isinstance(op, Put):
            events.append(Event("put", op.key, op.value, next_revision))
        elif op.key in mod_revisions:
            events.append(Event("delete", op.key, None, next_revision))
    return events


class SingleKeyWrites(ABC):
    """``put`` and ``delete`` as one-op transactions: every backend's single-key writes then follow the
    exact same rules (validation, CAS, fence) as its ``txn``."""

    @abstractmethod
    async def txn(self, ops: Sequence[Op], fence: Fence | None = None) -> int: ...

    async def put(
        self, key: str, value: bytes, expect_revision: int | None = None, fence: Fence | None = None
    ) -> int:
        return await self.txn([Put(key, value, expect_revision)], fence)

    async def delete(self, key: str, expect_revision: int | None = None, fence: Fence | None = None) -> int:
        return await self.txn([Delete(key, expect_revision)], fence)
