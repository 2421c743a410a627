"""Leader election for the server: the LeaderElector protocol and the term bookkeeping it shares.

One server at a time schedules and writes; the others stand by. Winning gives a **term**, whose
``Fence`` (the leader key and the ``create_revision`` it got when created) goes with every write,
so the store refuses a write from a term that has ended even if its author does not know yet.
Two implementations:

* ``EtcdLeaderElector`` (leader_etcd.py): several servers on one etcd cluster, the key bound to a
  lease kept alive by ``run()``;
* ``LocalLeaderElector`` (leader_local.py): one server over any Store (memory, SQLite).

Server loop::

    while True:
        await elector.campaign()                       # blocks while another server leads
        keepalive = asyncio.create_task(elector.run()) # returns when the term ends
        ... schedule, writing with fence=elector.fence, while elector.is_leader ...
        # on_lost(reason) fires the moment the term ends: stop scheduling there

``is_leader`` is computed from the local lease deadline, not from the last loop iteration, so a
process that was frozen (GC pause, SIGSTOP, VM migration) past its lease says "not leader" the
instant it runs again, before its keepalive loop has had a chance to notice.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from loadmaster.runtime.plane.errors import NotLeaderError
from loadmaster.store.interface import CompactedError, Fence, Store
from loadmaster.store.keys import check_key

LostCallback = Callable[[str], None]
DEFAULT_LEADER_KEY = "/leader"


class LeaderElector(Protocol):
    @property
    def identity(self) -> str:
        """This server's name, stored as the leader key's value."""
        ...

    @property
    def is_leader(self) -> bool:
        """True while the current term is certainly alive (checked against the lease deadline)."""
        ...

    @property
    def fence(self) -> Fence:
        """The fence of the current term, or of the last one after it ended (writes then get FencedError)."""
        ...

    async def campaign(self) -> None:
        """Return once this server leads; wait (watching the leader key) while another one does."""
        ...

    async def run(self) -> str:
        """Keep the current term alive; return why it ended (lost, expired or resigned)."""
        ...

    async def resign(self) -> None:
        """End the term now and free the leader key so a standby takes over at once."""
        ...

    async def leader_id(self) -> str | None:
        """Who leads according to the store (None: nobody)."""
        ...

    async def wait_lost(self) -> str:
        """Wait until the current term ends and return why (at once if there is no live term)."""
        ...


@dataclass
class LeadershipTerm:
    fence: Fence
    deadline: float  # clock() value until which the lease is certainly alive; math.inf without a lease
    lease_id: int = 0
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    reason: str | None = None


class LeadershipState:
    """The current term of one elector, and the single place where a term ends (firing ``on_lost``)."""

    def __init__(self, on_lost: LostCallback | None, clock: Callable[[], float]) -> None:
        self._on_lost = on_lost
        self._clock = clock
        self.term: LeadershipTerm | None = None
        self._last_reason = "never elected"

    def begin(self, fence: Fence, deadline: float = math.inf, lease_id: int = 0) -> LeadershipTerm:
        self.term = LeadershipTerm(fence, deadline, lease_id)
        return self.term

    def live_term(self) -> LeadershipTerm | None:
        """The current term unless it has ended (its deadline may still have passed: see is_leader)."""
        return self.term if self.term is not None and not self.term.ended.is_set() else None

    @property
    def is_leader(self) -> bool:
        term = self.live_term()
        return term is not None and self._clock() < term.deadline

    @property
    def fence(self) -> Fence:
        if self.term is None:
            raise NotLeaderError(message="no fence: this elector has never won an election")
        return self.term.fence

    def end(self, term: LeadershipTerm, reason: str) -> None:
        """End ``term`` (once; later calls are ignored) and tell the server through ``on_lost``."""
        if term.ended.is_set():
            return
        term.reason = reason
        self._last_reason = reason
        term.ended.set()
        if self._on_lost is not None:
            self._on_lost(reason)

    async def wait_lost(self) -> str:
        term = self.live_term()
        if term is None:
            return self._last_reason
        await term.ended.wait()
        return term.reason or self._last_reason


class KeyedElector:
    """What every elector shares: one leader key in a store, holding the leader's identity, the
    leadership state (term, fence, loss notification), and ``run``, which keeps a term until one of
    its watchers says it ended. Subclasses decide how the key is won and what watches a term."""

    def __init__(self, store: Store, identity: str, key: str, on_lost: LostCallback | None,
                 clock: Callable[[], float]) -> None:  # fmt: skip
        if not isinstance(identity, str) or not identity:
            raise ValueError(f"identity: must be a non-empty str, got {identity!r}")
        check_key(key, "key")
        self._identity = identity
        self._key = key
        self._clock = clock
        self._state = LeadershipState(on_lost, clock)
        self._keyed_store = store

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def is_leader(self) -> bool:
        return self._state.is_leader

    @property
    def fence(self) -> Fence:
        return self._state.fence

    async def leader_id(self) -> str | None:
        entry = await self._keyed_store.get(self._key)
        return entry.value.decode("utf-8", errors="replace") if entry is not None else None

    async def wait_lost(self) -> str:
        return await self._state.wait_lost()

    async def run(self) -> str:
        """Keep the current term until it ends (a watcher returns why, or ``resign``); why it ended."""
        term = self._state.term
        if term is None:
            raise RuntimeError("run(): this elector has never led; call campaign() first")
        if term.ended.is_set():  # ended before run() started (resigned, or lost at once)
            return term.reason or "ended"
        watchers = self._term_watchers(term).items()
        tasks: set[asyncio.Task[object]] = {asyncio.create_task(w, name=name) for name, w in watchers}
        tasks.add(asyncio.create_task(term.ended.wait(), name="leader-term-ended"))
        try:
            done, _pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                result = task.result()  # re-raises an unexpected error, after the finally below ends the term
                if isinstance(result, str):
                    self._state.end(term, result)
        finally:
            self._state.end(term, "leader loop stopped")  # no-op if the term already ended
            self._term_stopped(term)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return term.reason or "ended"

    def _term_watchers(self, term: LeadershipTerm) -> dict[str, Coroutine[Any, Any, str]]:
        """What may end ``term``, by task name; each returns why it did."""
        raise NotImplementedError

    def _term_stopped(self, term: LeadershipTerm) -> None:
        """Called as ``run`` stops, whatever ended the term (and even when ``run`` was cancelled)."""

    async def _follow_key(self, term: LeadershipTerm) -> str:
        """Watch the leader key until it stops being this term's (deleted, or rewritten by another);
        the reason. Compacted history is handled (re-read, watch on); any other StoreError propagates:
        each elector decides whether an unreachable store ends the term."""
        next_revision: int | None = term.fence.create_revision + 1
        mine = self._identity.encode("utf-8")
        while True:
            if next_revision is None:  # history was compacted: re-read the key, then watch on
                entries, revision = await self._keyed_store.list(self._key)
                current = next((entry for entry in entries if entry.key == self._key), None)
                if current is None or current.create_revision != term.fence.create_revision:
                    return "leader key changed while its history was compacted"
                next_revision = revision + 1
            try:
                async for event in self._keyed_store.watch(self._key, next_revision):
                    next_revision = event.revision + 1
                    if event.key != self._key:
                        continue
                    if event.kind == "delete":
                        return "leader key deleted"
                    if event.value != mine:
                        return "leader key rewritten by someone else"
            except CompactedError:
                next_revision = None
