"""Leader election on etcd: a leader key bound to a lease, created only if absent, fenced by revision.

* **Campaign**: grant a lease (TTL ``ttl_s``), then one txn ``if create(key) == 0 then put(key,
  identity, lease) else get(key)``. The winner's fence is the key's create_revision (the txn's
  revision). A loser revokes its unused lease and watches the key from the revision it lost at;
  when the key is deleted (resign, or the leader's lease expired) it campaigns again.
* **Keepalive** (``run``): renew the lease every ``ttl_s / 3``. Each renewal is sent at time ``t``
  and etcd answers with the TTL it restarted, so the lease surely lives until ``t + TTL``: that is
  the local deadline ``is_leader`` checks. The term ends when a renewal says the lease is gone,
  when renewals keep failing until the deadline passes, or when the watched key is deleted or
  rewritten by someone else.
* **Resign**: revoke the lease; etcd deletes the key at once and the standbys' watches fire.

A deposed leader that did not notice (paused, partitioned) cannot do harm: its writes carry
``create(key) == its create_revision``, which the next leader's key no longer has.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential

from loadmaster.runtime.plane.leadership.leader import (
    DEFAULT_LEADER_KEY,
    KeyedElector,
    LeadershipTerm,
    LostCallback,
)
from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import Fence, StoreError, UnavailableError

log = logging.getLogger(__name__)

DEFAULT_TTL_S = 15
_FIRST_RETRY_S = 0.05
_MAX_RETRY_S = 1.0


class EtcdLeaderElector(KeyedElector):
    def __init__(
        self,
        store: EtcdStore,
        identity: str,
        *,
        key: str = DEFAULT_LEADER_KEY,
        ttl_s: int = DEFAULT_TTL_S,
        on_lost: LostCallback | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(store, identity, key, on_lost, clock)
        if isinstance(ttl_s, bool) or not isinstance(ttl_s, int) or ttl_s < 2:
            raise ValueError(f"ttl_s: must be an int >= 2 (etcd's minimum lease TTL), got {ttl_s!r}")
        self._store = store
        self._ttl_s = ttl_s
        self._unused_lease_id: int | None = None  # the lease of a term that ended without resign()

    async def campaign(self) -> None:
        stale = self._state.live_term()
        if stale is not None and not self.is_leader:
            self._state.end(stale, "lease expired: no keepalive succeeded within the TTL")
            self._unused_lease_id = stale.lease_id
        if self._unused_lease_id is not None:
            await self._revoke_quietly(self._unused_lease_id)
            self._unused_lease_id = None
        while not self.is_leader:
            await self._retrying_store_errors(self._campaign_round)

    async def _campaign_round(self) -> None:
        """Try to take the key; if another holds it, wait until it is deleted."""
        lost_at = await self._try_acquire()
        if lost_at is not None:
            await self._wait_until_vacant(lost_at + 1)

    async def _retrying_store_errors(self, call: Callable[[], Awaitable[None]]) -> None:
        """``call()`` until it ends without a StoreError, waiting 0.05 s, 0.1 s, ... up to 1 s between.

        A store error is retried like a keepalive: an etcd leader change can fail a call with an
        unclassified error, and campaign() promises to return only as leader (or to be cancelled)."""

        def warn(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome is not None else None
            wait_s = state.next_action.sleep if state.next_action is not None else 0.0
            log.warning("leader campaign of %s: %s; retrying in %.2fs", self._identity, error, wait_s)

        async def attempt() -> None:
            await call()

        retrying = AsyncRetrying(
            wait=wait_exponential(multiplier=_FIRST_RETRY_S, max=_MAX_RETRY_S),
            retry=retry_if_exception_type(StoreError),
            before_sleep=warn,
            reraise=True,
        )
        await retrying(attempt)

    async def _try_acquire(self) -> int | None:
        """Create the key under a new lease: None if won, else the revision at which it was taken."""
        sent_at = self._clock()
        lease_id, granted_ttl_s = await self._store.grant_lease(self._ttl_s)
        try:
            created, _holder, revision = await self._store.create_with_lease(
                self._key, self._identity.encode("utf-8"), lease_id
            )
        except UnavailableError:
            # The create may have been applied with the answer lost: revoking deletes the key if so.
            await self._revoke_quietly(lease_id)
            raise
        if created:
            self._state.begin(Fence(self._key, revision), sent_at + granted_ttl_s, lease_id)
            log.info("%s leads (fence %s@%d, ttl %ds)", self._identity, self._key, revision, granted_ttl_s)
            return None
        await self._revoke_quietly(lease_id)
        return revision

    async def _revoke_quietly(self, lease_id: int) -> None:
        try:
            await self._store.revoke_lease(lease_id)
        except StoreError as error:
            # Not fatal: an unrevoked lease expires on its own after the TTL, taking its key with it.
            log.warning("could not revoke lease %x: %s", lease_id, error)

    async def _wait_until_vacant(self, from_revision: int) -> None:
        async for event in self._store.watch(self._key, from_revision):
            if event.key == self._key and event.kind == "delete":
                return

    def _term_watchers(self, term: LeadershipTerm) -> dict[str, Coroutine[Any, Any, str]]:
        return {"leader-keepalive": self._keep_alive(term), "leader-key-watch": self._watch_key(term)}

    def _term_stopped(self, term: LeadershipTerm) -> None:
        if term.reason != "resigned":
            # etcd may still hold the lease (it extends leases across its own leader changes, and a
            # paused process gives up on its own clock): the next campaign() revokes it, so nobody
            # waits out a TTL that nobody uses. Not here: run() must return the moment the term ends.
            # Called even when run() is cancelled by its server, so the lease is still left to revoke.
            self._unused_lease_id = term.lease_id

    async def _keep_alive(self, term: LeadershipTerm) -> str:
        interval_s = self._ttl_s / 3
        delay_s = interval_s
        while True:
            await asyncio.sleep(max(0.0, min(delay_s, term.deadline - self._clock())))
            sent_at = self._clock()
            if sent_at >= term.deadline:
                return "lease expired: no keepalive succeeded within the TTL"
            try:
                ttl_s = await self._store.keep_lease_alive(term.lease_id, timeout_s=term.deadline - sent_at)
            except StoreError as error:
                # Any failure is retried until the deadline, which alone decides: during an etcd leader
                # change a renewal can fail in ways etcd does not classify (gRPC UNKNOWN), and the lease
                # may well still be alive on the new raft leader.
                log.warning("keepalive of lease %x failed: %s", term.lease_id, error)
                delay_s = min(interval_s, 0.5)  # retry soon: the deadline is getting closer
                continue
            if ttl_s <= 0:
                return "lease expired: etcd no longer knows it"
            term.deadline = sent_at + ttl_s
            delay_s = interval_s

    async def _watch_key(self, term: LeadershipTerm) -> str:
        """Return as soon as the leader key stops being this term's (deleted, or rewritten by another)."""
        while True:
            try:
                return await self._follow_key(term)
            except StoreError as error:
                # The keepalive loop owns the decision about the term; keep watching once etcd is back.
                log.warning("leader key watch interrupted: %s", error)
                await asyncio.sleep(_MAX_RETRY_S)

    async def resign(self) -> None:
        term = self._state.live_term()
        if term is None:
            return
        self._state.end(term, "resigned")  # stop scheduling before the network call, not after
        await self._store.revoke_lease(term.lease_id)
