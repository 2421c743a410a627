"""Leadership for a single server over any Store (memory, SQLite): lead from the start, fence anyway.

There is nobody to elect against: SQLite already admits one server per data directory (a file
lock), and a memory store lives in one process. The server still writes with a fence, so the code
path is the one HA uses, and so a key deleted or rewritten behind the server's back (an operator,
a second server pointed at the same store by mistake) stops its writes instead of mixing them.

``campaign`` re-creates the leader key (delete, then create-if-absent): a fresh key gets a fresh
``create_revision``, so a fence kept by an earlier incarnation of the server never matches again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from loadmaster.runtime.plane.leadership.leader import (
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

    def _term_watchers(self, term: LeadershipTerm) -> dict[str, Coroutine[Any, Any, str]]:
        """The term lasts while the leader key is ours (there is no lease to keep)."""
        return {"leader-key-watch": self._watch_key(term)}

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
