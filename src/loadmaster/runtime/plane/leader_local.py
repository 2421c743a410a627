"""Leadership for a single server over any Store (memory, SQLite): lead from the start, fence anyway.

There is nobody to elect against: SQLite already admits one server per data directory (a file
lock), and a memory store lives in one process. The server still writes with a fence, so the code
path is the one HA uses, and so a key deleted or rewritten behind the server's back (an operator,
a second server pointed at the same store by mistake) stops its writes instead of mixing them.

``campaign`` re-creates the leader key (delete, then create-if-absent): a fresh key gets a fresh
``create_revision``, so a fence kept by an earlier incarnation of the server never matches again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from loadmaster.runtime.plane.leader import (
    DEFAULT_LEADER_KEY,
    KeyedElector,
    LeadershipTerm,
    LostCallback,
)
from loadmaster.store.interface import (
    ConflictError,
    Fence,
    FencedError,
    Store,
    UnavailableError,
)

log = logging.getLogger(__name__)


class LeaderKeyTakenError(RuntimeError):
    """Another writer changed the leader key while this server was taking it: two servers share a store."""


class LocalLeaderElector(KeyedElector):
    def __init__(
        self,
        store: Store,
        identity: str,
        *,
        key: str = DEFAULT_LEADER_KEY,
        on_lost: LostCallback | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(store, identity, key, on_lost, clock)
        self._store = store

    async def campaign(self) -> None:
        """Take the leader key at once; LeaderKeyTakenError if another writer races for it."""
        if self.is_leader:
            return
        previous = await self._store.get(self._key)
        try:
            if previous is not None:
                await self._store.delete(self._key, expect_revision=previous.mod_revision)
            revision = await self._store.put(self._key, self._identity.encode("utf-8"), expect_revision=0)
        except ConflictError as error:
            raise LeaderKeyTakenError(
                f"leader key {self._key!r} changed while {self._identity} was taking it: {error}"
            ) from error
        # The put created the key, so its create_revision is the revision of that put.
        self._state.begin(Fence(self._key, revision))
        log.info("%s leads alone (fence %s@%d)", self._identity, self._key, revision)

    async def run(self) -> str:
        """Watch the leader key until it stops being ours, or until ``resign``; return why the term ended."""
        term = self._state.term
        if term is None:
            raise RuntimeError("run(): this elector has never led; call campaign() first")
        if term.ended.is_set():  # ended before run() started (resigned, or lost at once)
            return term.reason or "ended"
        watch = asyncio.create_task(self._watch_key(term), name="leader-key-watch")
        ended = asyncio.create_task(term.ended.wait(), name="leader-term-ended")
        try:
            done, _pending = await asyncio.wait({watch, ended}, return_when=asyncio.FIRST_COMPLETED)
            if watch in done:
                self._state.end(term, watch.result())
        finally:
            self._state.end(term, "leader loop stopped")  # no-op if the term already ended
            for task in (watch, ended):
                task.cancel()
            await asyncio.gather(watch, ended, return_exceptions=True)
        return term.reason or "ended"

    async def _watch_key(self, term: LeadershipTerm) -> str:
        """Return once the leader key stops being this term's: deleted, rewritten, or the store closed."""
        try:
            return await self._follow_key(term)
        except UnavailableError as error:
            # A local store only becomes unavailable when it is closed: nothing this server writes can land.
            return f"store unavailable: {error}"

    async def resign(self) -> None:
        term = self._state.live_term()
        if term is None:
            return
        self._state.end(term, "resigned")
        try:
            await self._store.delete(self._key, fence=term.fence)
        except FencedError:
            log.info("resign of %s: the leader key was no longer ours; nothing to free", self._identity)
