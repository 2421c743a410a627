"""The Store on etcd v3 (aetcd's gRPC channel and stubs): the backend for several servers in HA.

Every Store call is one etcd request, so every guarantee is etcd's own: one store-wide revision,
linearizable reads, all-or-nothing txns whose compares are checked together (see etcd_txn.py),
watches that replay history (see etcd_watch.py). Keys live under one root (see etcd_keyspace.py).

Besides the Store protocol, EtcdStore offers the few lease calls leader election needs
(``grant_lease``, ``keep_lease_alive``, ``revoke_lease``, ``create_with_lease``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import aetcd
import grpc
from aetcd import rpc

from loadmaster.store.etcd_errors import RevisionCompactedRpcError, is_lease_not_found, store_error
from loadmaster.store.etcd_keyspace import EtcdKeyspace
from loadmaster.store.etcd_txn import build_txn_request, compare_revision, read_op, txn_revision
from loadmaster.store.etcd_url import EtcdEndpoint, grpc_target, parse_etcd_url
from loadmaster.store.etcd_watch import WatchRetryPolicy, resumable_watch
from loadmaster.store.interface import Entry, Event, Fence, Op, UnavailableError
from loadmaster.store.keys import check_key, check_prefix
from loadmaster.store.txn_rules import SingleKeyWrites, validate_txn
from loadmaster.store.watch_stream import check_start_revision

T = TypeVar("T")

# Entries per range request when listing: keeps each response far below gRPC's message limit.
LIST_PAGE_SIZE = 1000
# gRPC finishes a cancelled stream (watch, lease keepalive) on its own thread a moment after
# ``cancel()`` returns, then hands the completion to the event loop that started the stream. If that
# loop is closed by then, the *next* event loop in the process that uses gRPC gets "Event loop is
# closed" errors (per-test loops in pytest, or several asyncio.run calls). gRPC exposes no way to
# await those completions, so close() gives them this long to land; measured: 1 ms was enough here.
_CLOSE_DRAIN_S = 0.02
# A list reads every page at the revision of its first page; if etcd compacts that revision
# between two pages, the list starts over (a few times at most: compaction is rare and periodic).
_LIST_ATTEMPTS = 5


def _channel_options(keepalive_s: float) -> dict[str, Any]:
    return {
        # etcd's --max-request-bytes is 1.5 MiB, but a page of 1000 large values can be bigger.
        "grpc.max_receive_message_length": 256 * 1024 * 1024,
        # Pings on open streams detect a member that is gone without closing TCP (SIGSTOP, partition).
        # etcd refuses pings more often than --grpc-keepalive-min-time (5 s) and pings with no stream.
        "grpc.keepalive_time_ms": int(keepalive_s * 1000),
        "grpc.keepalive_timeout_ms": int(keepalive_s * 1000),
        "grpc.http2.max_pings_without_data": 0,
        # gRPC's default reconnect backoff grows to minutes; a restarted member should be used at once.
        "grpc.initial_reconnect_backoff_ms": 100,
        "grpc.max_reconnect_backoff_ms": 1000,
    }


def _entry(keyspace: EtcdKeyspace, kv: Any) -> Entry:
    key = keyspace.store_key(bytes(kv.key))
    return Entry(key, bytes(kv.value), int(kv.create_revision), int(kv.mod_revision))


class EtcdStore(SingleKeyWrites):
    """Store backed by an etcd cluster. Create with ``await EtcdStore.connect(url, prefix=...)``."""

    def __init__(
        self,
        client: aetcd.Client,
        endpoints: tuple[EtcdEndpoint, ...],
        keyspace: EtcdKeyspace,
        request_timeout_s: float,
        watch_policy: WatchRetryPolicy,
    ) -> None:
        self._client = client
        self._timeout = request_timeout_s
        self._keyspace = keyspace
        self._watch_policy = watch_policy
        self._where = ",".join(str(endpoint) for endpoint in endpoints)
        self._closed = False
        self._opened_streams = False  # see _CLOSE_DRAIN_S

    @classmethod
    async def connect(
        cls,
        url: str,
        prefix: str = "/loadmaster",
        *,
        request_timeout_s: float = 5.0,
        watch_max_outage_s: float = 30.0,
        keepalive_s: float = 10.0,
    ) -> EtcdStore:
        """Parse ``etcd://h:p[,h:p...]``, open the channel and check that etcd answers.

        ``request_timeout_s`` bounds every unary call; ``watch_max_outage_s`` is how long a watch
        keeps reopening its stream before UnavailableError; ``keepalive_s`` (>= 5, etcd's minimum
        ping interval) is how often an open stream is pinged to detect a silent member.
        """
        endpoints = parse_etcd_url(url)
        keyspace = EtcdKeyspace.from_prefix(prefix)
        if request_timeout_s <= 0:
            raise ValueError(f"request_timeout_s: must be > 0, got {request_timeout_s}")
        if keepalive_s < 5:
            raise ValueError(f"keepalive_s: etcd refuses pings more often than every 5 s, got {keepalive_s}")
        policy = WatchRetryPolicy(max_outage_s=watch_max_outage_s)
        host, port = grpc_target(endpoints)
        options = _channel_options(keepalive_s)
        client = aetcd.Client(host=host, port=port, timeout=request_timeout_s, options=options)
        store = cls(client, endpoints, keyspace, request_timeout_s, policy)
        try:
            await client.connect()
            await store.revision()
        except BaseException:
            await client.close()
            raise
        return store

    @property
    def where(self) -> str:
        """The endpoints, for messages."""
        return self._where

    def _stub(self, name: str) -> Any:
        if self._closed:
            raise UnavailableError(f"etcd {self._where}: the store is closed")
        return getattr(self._client, name)

    def _stream_stub(self, name: str) -> Any:
        self._opened_streams = True
        return self._stub(name)

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            raise store_error(error, self._where) from error

    async def _range(self, request: Any) -> Any:
        stub = self._stub("kvstub")
        return await self._call(lambda: stub.Range(request, timeout=self._timeout))

    async def _txn(self, request: Any) -> Any:
        stub = self._stub("kvstub")
        return await self._call(lambda: stub.Txn(request, timeout=self._timeout))

    async def get(self, key: str) -> Entry | None:
        check_key(key)
        response = await self._range(rpc.RangeRequest(key=self._keyspace.etcd_key(key)))
        return _entry(self._keyspace, response.kvs[0]) if response.kvs else None

    async def _list_at_one_revision(self, prefix: str) -> tuple[list[Entry], int]:
        start, end = self._keyspace.key_range(prefix)
        entries: list[Entry] = []
        revision = 0  # 0 = the current revision for the first page; then pinned to it
        while True:
            response = await self._range(
                rpc.RangeRequest(key=start, range_end=end, limit=LIST_PAGE_SIZE, revision=revision)
            )
            revision = revision or int(response.header.revision)
            entries.extend(_entry(self._keyspace, kv) for kv in response.kvs)
            if not response.more:
                return entries, revision
            start = bytes(response.kvs[-1].key) + b"\0"  # the next key after the last one read

    async def list(self, prefix: str) -> tuple[list[Entry], int]:
        check_prefix(prefix)
        for _attempt in range(_LIST_ATTEMPTS):
            try:
                return await self._list_at_one_revision(prefix)
            except RevisionCompactedRpcError:
                continue
        raise UnavailableError(f"etcd {self._where}: list {prefix!r} kept racing compaction")

    async def txn(self, ops: Sequence[Op], fence: Fence | None = None) -> int:
        validate_txn(ops, fence)
        response = await self._txn(build_txn_request(self._keyspace, ops, fence))
        return txn_revision(response, ops, fence)

    async def revision(self) -> int:
        start, end = self._keyspace.key_range("")
        response = await self._range(rpc.RangeRequest(key=start, range_end=end, count_only=True))
        return int(response.header.revision)

    def known_revision(self, prefix: str = "/") -> int | None:
        return None  # other servers write to the same cluster: only etcd knows

    def watch(self, prefix: str, start_revision: int) -> AsyncIterator[Event]:
        check_prefix(prefix)
        check_start_revision(start_revision)
        return resumable_watch(
            lambda: rpc.WatchStub(self._stream_stub("channel")),
            self._keyspace,
            prefix,
            start_revision,
            policy=self._watch_policy,
            where=self._where,
        )

    async def compact(self, revision: int) -> None:
        """Drop the history of every revision older than ``revision`` (watches from there on still work).

        etcd's compaction is cluster-wide: it also drops the history of keys outside this store's root.
        """
        current = await self.revision()
        if revision <= 1:
            return  # revision 1 is the first that can exist: there is nothing older
        if revision > current:
            raise ValueError(f"revision: cannot compact to {revision}, the store is at {current}")
        stub = self._stub("kvstub")
        request = rpc.CompactionRequest(revision=revision, physical=True)
        try:
            await self._call(lambda: stub.Compact(request, timeout=self._timeout))
        except RevisionCompactedRpcError:
            return  # already compacted at or past ``revision``: nothing older is left to drop

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._client.close()
            if self._opened_streams:
                await asyncio.sleep(_CLOSE_DRAIN_S)

    # --- leases: what EtcdLeaderElector needs beyond the Store protocol -------------------------

    async def grant_lease(self, ttl_s: int) -> tuple[int, int]:
        """A new lease; returns ``(lease_id, granted_ttl_s)`` (etcd may raise a TTL below its minimum)."""
        stub = self._stub("leasestub")
        request = rpc.LeaseGrantRequest(TTL=ttl_s)
        response = await self._call(lambda: stub.LeaseGrant(request, timeout=self._timeout))
        if response.error:
            raise UnavailableError(f"etcd {self._where}: lease grant refused: {response.error}")
        return int(response.ID), int(response.TTL)

    async def keep_lease_alive(self, lease_id: int, timeout_s: float) -> int:
        """Renew the lease once; returns its new TTL in seconds, 0 if it has already expired."""
        stub = self._stream_stub("leasestub")

        async def renew() -> Any:
            call = stub.LeaseKeepAlive(timeout=timeout_s)
            try:
                await call.write(rpc.LeaseKeepAliveRequest(ID=lease_id))
                return await call.read()
            finally:
                call.cancel()

        response = await self._call(renew)
        if response is grpc.aio.EOF:
            raise UnavailableError(f"etcd {self._where}: lease keepalive stream closed without an answer")
        return int(response.TTL)

    async def revoke_lease(self, lease_id: int) -> None:
        """Revoke the lease, deleting its keys at once; a lease that is already gone is fine."""
        stub = self._stub("leasestub")
        try:
            await stub.LeaseRevoke(rpc.LeaseRevokeRequest(ID=lease_id), timeout=self._timeout)
        except grpc.aio.AioRpcError as error:
            if not is_lease_not_found(error):
                raise store_error(error, self._where) from error

    async def create_with_lease(
        self, key: str, value: bytes, lease_id: int
    ) -> tuple[bool, Entry | None, int]:
        """Create ``key`` bound to the lease if it does not exist.

        Returns ``(created, holder, revision)``: the holder is the existing entry when not created, and
        ``revision`` is the store revision the decision was made at (the create_revision on success).
        """
        check_key(key)
        etcd_key = self._keyspace.etcd_key(key)
        request = rpc.TxnRequest(
            compare=[compare_revision(etcd_key, 0)],
            success=[rpc.RequestOp(request_put=rpc.PutRequest(key=etcd_key, value=value, lease=lease_id))],
            failure=[read_op(etcd_key)],
        )
        response = await self._txn(request)
        revision = int(response.header.revision)
        if response.succeeded:
            return True, None, revision
        kvs = response.responses[0].response_range.kvs
        return False, (_entry(self._keyspace, kvs[0]) if kvs else None), revision
