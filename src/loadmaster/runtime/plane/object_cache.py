"""The object cache: every stored object, counter and token, in memory, kept in step by one watch.

Each server keeps one (leader or not): the scheduler and the controllers read it instead of the
store, the API answers ``why`` and ``preview`` from it, and auth looks tokens up in it. It lists the
store once, then applies each watch event as it comes (no reload per event), and tells listeners
``(kind, name, before, after)`` for every object that changed. A node's heartbeat lease
(``/heartbeats/<node>``, store_layout.py) is folded into the cached node: ``status.last_heartbeat`` is the
later of the object's and the lease's, and a lease that moves it is told to the *heartbeat* listeners
only (a later heartbeat changes nothing else, so the scheduler and the controllers need not look at the
node again; only a node's staleness deadline moves). While ``holding()`` is held, no event is applied
(the next waits, at a revision boundary): what the listeners keep stays still, so a worker thread
may read it (the scheduling model's build, ``scheduling_model.py``). The watch covers the whole keyspace,
so the cache's revision follows the store's exactly and ``wait_for(revision)`` can promise that a
write the caller made is visible. A compacted watch relists and reports the difference as changes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import structlog

from loadmaster.manifests import KINDS, NODE
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.storage.store_layout import (
    COUNTERS,
    HEARTBEATS,
    OBJECTS,
    TOKENS,
    counter_key,
    decode_object,
    heartbeat_key,
    object_key,
    parse_counter_key,
    parse_object_key,
    token_key,
)
from loadmaster.runtime.plane.storage.store_retries import STORE_RETRY_S
from loadmaster.runtime.plane.tokens import TokenGrant, grant_of
from loadmaster.store.codec import CodecError, decode
from loadmaster.store.interface import CompactedError, Event, Store, StoreError, UnavailableError

log = structlog.get_logger(__name__)

# A burst of queued events (a cycle's writes coming back) is applied this many at a time (at least one
# whole transaction), then the loop serves whatever else is ready: an event with its listeners is
# ~0.1-0.2 ms at 5,000 nodes and 10,000 replicas, so 64 is ~10 ms.
YIELD_EVERY_EVENTS = 64
Key = TypeVar("Key")
Value = TypeVar("Value")


@dataclass(slots=True)
class Cached:
    kind: str
    name: str
    obj: dict[str, Any]  # the stored object, metadata.revision included
    create_revision: int
    mod_revision: int


Listener = Callable[[str, str, Cached | None, Cached | None], None]


class ObjectCache:
    def __init__(self, store: Store) -> None:
        self._store = store
        self.objects: dict[str, dict[str, Cached]] = {kind: {} for kind in KINDS}
        self.counters: dict[tuple[str, str], tuple[int, int]] = {}  # (deployment, service) -> (next, rev)
        self.tokens: dict[str, tuple[TokenGrant, int]] = {}  # sha256 -> (grant, mod revision)
        self.heartbeats: dict[str, tuple[str, int]] = {}  # node -> (lease time, mod revision)
        self.revision = 0
        self._listeners: list[Listener] = []
        self._heartbeat_listeners: list[Listener] = []
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._holds = 0
        self._released = asyncio.Event()

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        self._listeners.remove(listener)

    def add_heartbeat_listener(self, listener: Listener) -> None:
        """``listener(NODE, name, before, after)`` when only a node's heartbeat time moved (module doc)."""
        self._heartbeat_listeners.append(listener)

    def remove_heartbeat_listener(self, listener: Listener) -> None:
        self._heartbeat_listeners.remove(listener)

    def get(self, kind: str, name: str) -> Cached | None:
        return self.objects[kind].get(name)

    async def start(self) -> None:
        """List the store, then follow it in the background."""
        await self._load()
        self._task = asyncio.create_task(self._follow(), name="object-cache-watch")

    async def close(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for _, waiter in self._waiters:
            if not waiter.done():
                waiter.cancel()
        self._waiters.clear()

    @contextlib.asynccontextmanager
    async def holding(self) -> AsyncIterator[None]:
        """Apply no event until this exits (module doc)."""
        self._holds += 1
        self._released.clear()
        try:
            yield
        finally:
            self._holds -= 1
            if not self._holds:
                self._released.set()

    async def catch_up(self) -> None:
        """Return once the cache holds every write the store had when this was called (so a read
        from the cache sees what the caller, or anyone, wrote before)."""
        await self.wait_for(await self._store.revision())

    async def wait_for(self, revision: int) -> None:
        """Return once every write up to ``revision`` is in the cache."""
        if self.revision >= revision:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((revision, waiter))
        await waiter

    # -- loading and following ------------------------------------------------------------------

    async def _load(self) -> None:
        """(Re)list everything the cache holds and report what differs from what it held."""
        objects, objects_revision = await self._store.list(OBJECTS)
        counters, _ = await self._store.list(COUNTERS)
        tokens, _ = await self._store.list(TOKENS)
        heartbeats, _ = await self._store.list(HEARTBEATS)
        listed = {entry.key: entry for entry in (*heartbeats, *objects, *counters, *tokens)}
        known = self._known_keys()
        for key in sorted(known - listed.keys()):
            self._apply(Event("delete", key, None, objects_revision), create_revision=0)
        for key, entry in listed.items():
            self._apply(
                Event("put", key, entry.value, entry.mod_revision), create_revision=entry.create_revision
            )
        # The watch resumes after the first list; later lists' extra events are recognised by revision.
        self._advance(max(self.revision, objects_revision))

    def _known_keys(self) -> set[str]:
        keys = {object_key(kind, name) for kind, names in self.objects.items() for name in names}
        keys |= {counter_key(deployment, service) for deployment, service in self.counters}
        keys |= {token_key(token_hash) for token_hash in self.tokens}
        keys |= {heartbeat_key(node) for node in self.heartbeats}
        return keys

    async def _follow(self) -> None:
        applied = 0
        while not self._closed:
            try:
                async for event in self._store.watch("/", self.revision + 1):
                    # A cycle's 10,000 writes must not hold up requests: let them run now and then, but
                    # only between two revisions. A waiter woken for a revision runs at the next pause, so
                    # a pause inside one would show it a transaction half applied.
                    if event.revision > self.revision:
                        if applied >= YIELD_EVERY_EVENTS:
                            applied = 0
                            await asyncio.sleep(0)
                        while self._holds:
                            await self._released.wait()
                    self._apply(event)
                    self._advance(event.revision)
                    applied += 1
            except CompactedError as error:
                log.warning("cache watch compacted; relisting", error=str(error))
                await self._load()
            except UnavailableError as error:
                if self._closed:
                    return
                log.warning("cache watch interrupted; resuming", error=str(error))
                await asyncio.sleep(STORE_RETRY_S)
            except StoreError as error:
                log.error("cache watch failed; resuming", error=str(error))
                await asyncio.sleep(STORE_RETRY_S)

    def _advance(self, revision: int) -> None:
        if revision <= self.revision:
            return
        self.revision = revision
        still: list[tuple[int, asyncio.Future[None]]] = []
        for wanted, waiter in self._waiters:
            if wanted <= revision:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                still.append((wanted, waiter))
        self._waiters = still

    def _apply(self, event: Event, create_revision: int | None = None) -> None:
        key = event.key
        try:
            if key.startswith(OBJECTS):
                self._apply_object(event, create_revision)
            elif key.startswith(COUNTERS):
                self._apply_counter(event)
            elif key.startswith(TOKENS):
                self._apply_token(event)
            elif key.startswith(HEARTBEATS):
                self._apply_heartbeat(event)
        except (CodecError, KeyError, TypeError, ValueError) as error:
            # A value the server did not write (edited by hand): leave it out, loudly.
            log.error("unreadable stored value ignored", key=key, error=str(error))

    def _apply_object(self, event: Event, create_revision: int | None) -> None:
        parsed = parse_object_key(event.key)
        if parsed is None:
            return
        kind, name = parsed
        table = self.objects[kind]
        before = table.get(name)
        if event.kind == "delete" or event.value is None:
            if before is None or before.mod_revision > event.revision:
                return
            del table[name]
            self._notify(kind, name, before, None)
            return
        if before is not None and before.mod_revision >= event.revision:
            return
        created = create_revision or (before.create_revision if before is not None else event.revision)
        obj = decode_object(event.value, event.revision)
        if kind == NODE and name in self.heartbeats:
            obj = _with_lease(obj, self.heartbeats[name][0])
        after = Cached(kind, name, obj, created, event.revision)
        table[name] = after
        self._notify(kind, name, before, after)

    def _apply_heartbeat(self, event: Event) -> None:
        node = event.key[len(HEARTBEATS) :]
        _apply_revisioned(self.heartbeats, node, event, lambda value: str(decode(value)["at"]))
        before = self.objects[NODE].get(node)
        lease = self.heartbeats.get(node)
        if before is None or lease is None:
            return  # a lease without its node (deleted meanwhile) changes nothing
        obj = _with_lease(before.obj, lease[0])
        if obj is before.obj:
            return
        after = Cached(NODE, node, obj, before.create_revision, before.mod_revision)
        self.objects[NODE][node] = after
        for listener in self._heartbeat_listeners:
            listener(NODE, node, before, after)

    def _apply_counter(self, event: Event) -> None:
        parsed = parse_counter_key(event.key)
        if parsed is not None:
            _apply_revisioned(self.counters, parsed, event, lambda value: int(decode(value)["next_index"]))

    def _apply_token(self, event: Event) -> None:
        token_hash = event.key[len(TOKENS) :]
        _apply_revisioned(self.tokens, token_hash, event, grant_of)

    def _notify(self, kind: str, name: str, before: Cached | None, after: Cached | None) -> None:
        for listener in self._listeners:
            listener(kind, name, before, after)


def _with_lease(node: dict[str, Any], lease_time: str) -> dict[str, Any]:
    """``node`` with ``status.last_heartbeat`` = the later of its own and ``lease_time`` (the same dict
    when the lease is not later)."""
    status = node.get("status") or {}
    own = status.get("last_heartbeat")
    if own is not None and parse_timestamp(own) >= parse_timestamp(lease_time):
        return node
    return {**node, "status": {**status, "last_heartbeat": lease_time}}


def _apply_revisioned(
    table: dict[Key, tuple[Value, int]], key: Key, event: Event, value_of: Callable[[bytes], Value]
) -> None:
    """Keep ``table[key]`` = (value, mod revision) at the newest revision seen: a put newer than what is
    held replaces it, a delete no older removes it, anything older (a relist's stale copy) is ignored."""
    before = table.get(key)
    if event.kind == "delete" or event.value is None:
        if before is not None and before[1] <= event.revision:
            del table[key]
        return
    if before is None or before[1] < event.revision:
        table[key] = (value_of(event.value), event.revision)
