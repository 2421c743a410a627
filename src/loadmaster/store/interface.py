"""The Store protocol: one contract, three backends (memory, SQLite, etcd).

The model is etcd's, because etcd is the most constrained backend and the others can imitate it
exactly:

* one store-wide ``revision`` counter; every successful write transaction bumps it by one;
* every key carries ``create_revision`` (revision of the put that created it) and
  ``mod_revision`` (revision of its last put);
* compare-and-swap is "``mod_revision`` equals what I read" (``expect_revision``); ``0`` means
  "the key must not exist", ``None`` means unconditional;
* a **fence** makes a write conditional on a leadership key still having the ``create_revision``
  its holder recorded when it won the election, so a deposed leader's late write is refused;
* ``watch(prefix, start_revision)`` yields every change with revision >= start_revision in order,
  and raises ``CompactedError`` when that history is gone (the caller relists and watches again).

Keys are ``/``-separated strings (``/replicas/shop-api-3``); values are opaque bytes (see codec.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

# etcd's default --max-txn-ops. Every backend enforces it so code that passes on SQLite passes on etcd.
MAX_TXN_OPS = 128


@dataclass(frozen=True, slots=True)
class Entry:
    key: str
    value: bytes
    create_revision: int
    mod_revision: int


@dataclass(frozen=True, slots=True)
class Event:
    kind: Literal["put", "delete"]
    key: str
    value: bytes | None  # None for deletes
    revision: int  # the revision of the write that caused it


@dataclass(frozen=True, slots=True)
class Put:
    key: str
    value: bytes
    expect_revision: int | None = None  # None: unconditional; 0: must not exist; n: mod_revision == n


@dataclass(frozen=True, slots=True)
class Delete:
    key: str
    expect_revision: int | None = None  # None: unconditional (deleting a missing key is a no-op)


Op = Put | Delete


@dataclass(frozen=True, slots=True)
class Fence:
    """A write is accepted only while ``key`` exists with this ``create_revision`` (leader fencing)."""

    key: str
    create_revision: int


class StoreError(Exception):
    """Base class of every error a Store raises."""


class ConflictError(StoreError):
    """A compare failed: the named key's revision was not the expected one. Nothing was written."""

    def __init__(self, key: str, expected: int | None, actual: int) -> None:
        super().__init__(f"{key}: expected revision {expected}, found {actual}")
        self.key, self.expected, self.actual = key, expected, actual


class FencedError(StoreError):
    """The writer no longer leads (the fence key is gone or was re-created). Nothing was written."""


class CompactedError(StoreError):
    """The requested watch revision is older than the retained history: relist, then watch again."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"revision {requested} is compacted; oldest retained is {oldest}")
        self.requested, self.oldest = requested, oldest


class TxnTooLargeError(StoreError):
    """More than MAX_TXN_OPS operations in one transaction."""


class UnavailableError(StoreError):
    """The backend cannot be reached right now (etcd down, database closed). Safe to retry."""


@runtime_checkable
class Store(Protocol):
    """Async key-value store with revisions, CAS, fenced transactions and resumable watches."""

    async def get(self, key: str) -> Entry | None: ...

    async def list(self, prefix: str) -> tuple[list[Entry], int]:
        """Entries under ``prefix`` sorted by key, and the store revision they were read at."""
        ...

    async def put(
        self, key: str, value: bytes, expect_revision: int | None = None, fence: Fence | None = None
    ) -> int:
        """Write one key; returns the new store revision. Raises ConflictError / FencedError."""
        ...

    async def delete(self, key: str, expect_revision: int | None = None, fence: Fence | None = None) -> int:
        """Delete one key; returns the store revision after the call."""
        ...

    async def txn(self, ops: Sequence[Op], fence: Fence | None = None) -> int:
        """Apply every op or none (all compares are checked first); returns the new store revision.

        At most MAX_TXN_OPS ops and at most MAX_TXN_OPS compares counting the fence, so a fenced txn may
        compare at most 127 keys (TxnTooLargeError); a key may appear at most once (ValueError).
        """
        ...

    async def revision(self) -> int:
        """The current store revision."""

    def known_revision(self, prefix: str = "/") -> int | None:
        """At least the revision of the last committed write under ``prefix``, known without asking,
        when every write to the store goes through this object (SQLite: one writer per data dir;
        memory); None when others may write to it (etcd). A reader whose copy of ``prefix`` is at this
        revision holds every acknowledged write under it (revisions_by_group.py)."""
        ...

    def watch(self, prefix: str, start_revision: int) -> AsyncIterator[Event]:
        """Every change under ``prefix`` with revision >= start_revision, in revision order, forever.

        Raises CompactedError (at once or on first iteration) when start_revision is no longer retained,
        and UnavailableError when the backend goes away (the caller resumes from its last revision + 1).
        """
        ...

    async def compact(self, revision: int) -> None:
        """Forget history older than ``revision`` (watches from older revisions raise CompactedError)."""
        ...

    async def close(self) -> None: ...
