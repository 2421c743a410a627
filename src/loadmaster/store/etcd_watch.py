"""A resumable etcd watch: one gRPC Watch stream at a time, reopened from the last revision + 1.

etcd keeps the history of every key until it is compacted, so a watch that loses its stream (member
restarted, killed, paused past the keepalive timeout) loses nothing: it opens a new stream at
``last delivered revision + 1`` and etcd replays what happened in between. Only two things end the
iteration: the history it needs was compacted (CompactedError: the caller relists) or etcd stayed
unreachable longer than ``max_outage_s`` (UnavailableError: the caller decides).

Each stream asks for ``hasleader`` so a member that lost its raft leader closes the stream instead
of leaving the watch silently stalled; the retry then reaches a member that still serves.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from aetcd import rpc

from loadmaster.store.etcd_keyspace import EtcdKeyspace
from loadmaster.store.interface import CompactedError, Event, UnavailableError

# etcd's rpctypes.MetadataRequireLeaderKey: refuse to serve the stream from a leaderless member.
_REQUIRE_LEADER = (("hasleader", "true"),)


@dataclass(frozen=True, slots=True)
class WatchRetryPolicy:
    """How long a watch keeps reopening its stream; the backoff doubles from first to max."""

    max_outage_s: float = 30.0
    first_backoff_s: float = 0.05
    max_backoff_s: float = 1.0

    def __post_init__(self) -> None:
        for name in ("max_outage_s", "first_backoff_s", "max_backoff_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"watch retry policy: {name} must be > 0, got {getattr(self, name)}")


class _StreamLostError(Exception):
    """The stream ended without compaction: reopen it (within the outage budget)."""


def _event(keyspace: EtcdKeyspace, raw: Any) -> Event:
    key = keyspace.store_key(bytes(raw.kv.key))
    # A DELETE carries the deleted key with mod_revision set to the deleting revision.
    if raw.type == rpc.Event.DELETE:
        return Event("delete", key, None, int(raw.kv.mod_revision))
    return Event("put", key, bytes(raw.kv.value), int(raw.kv.mod_revision))


async def _stream(
    stub: Any,
    keyspace: EtcdKeyspace,
    key_range: tuple[bytes, bytes],
    start_revision: int,
    on_created: Callable[[], None],
) -> AsyncIterator[Event]:
    """Events of one Watch stream from ``start_revision``; _StreamLostError when the stream breaks."""
    call = stub.Watch(metadata=_REQUIRE_LEADER)
    try:
        start, end = key_range
        create = rpc.WatchCreateRequest(key=start, range_end=end, start_revision=start_revision)
        await call.write(rpc.WatchRequest(create_request=create))
        while True:
            response = await call.read()
            if response is grpc.aio.EOF:
                raise _StreamLostError("etcd ended the watch stream")
            if response.compact_revision:
                raise CompactedError(start_revision, int(response.compact_revision))
            if response.canceled:
                reason = response.cancel_reason or "no reason given"
                raise _StreamLostError(f"etcd canceled the watch: {reason}")
            if response.created:
                on_created()
            for raw in response.events:
                yield _event(keyspace, raw)
    except grpc.aio.AioRpcError as error:
        raise _StreamLostError(f"{error.code().name}: {error.details()}") from error
    finally:
        call.cancel()


async def resumable_watch(
    stub_source: Callable[[], Any],
    keyspace: EtcdKeyspace,
    prefix: str,
    start_revision: int,
    *,
    policy: WatchRetryPolicy,
    where: str,
) -> AsyncIterator[Event]:
    """Every event under ``prefix`` from ``start_revision`` on, in revision order, across stream losses.

    ``stub_source`` returns the WatchStub of the live channel, or raises UnavailableError once the
    store is closed (which ends the watch at once rather than after the outage budget).
    """
    loop = asyncio.get_running_loop()
    # etcd treats start_revision 0 as "from now"; the Store contract means "everything retained".
    next_revision = max(start_revision, 1)
    outage_since: float | None = None
    backoff_s = policy.first_backoff_s

    def connected() -> None:
        nonlocal outage_since, backoff_s
        outage_since, backoff_s = None, policy.first_backoff_s

    key_range = keyspace.key_range(prefix)
    while True:
        try:
            async for event in _stream(stub_source(), keyspace, key_range, next_revision, connected):
                yield event
                # Whole responses are yielded before the next read, so no revision is half-delivered.
                next_revision = event.revision + 1
        except _StreamLostError as lost:
            now = loop.time()
            outage_since = now if outage_since is None else outage_since
            if now - outage_since >= policy.max_outage_s:
                raise UnavailableError(
                    f"etcd {where}: watch on {prefix!r} could not resume from revision {next_revision} "
                    f"for {now - outage_since:.1f}s: {lost}"
                ) from lost
            await asyncio.sleep(backoff_s)
            backoff_s = min(backoff_s * 2, policy.max_backoff_s)
