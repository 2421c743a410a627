"""Reading stored objects for the API, so that a reader sees every write acknowledged before its read,
and followed live (``object_feed``) for watchers.

A read is served from the object cache when the cache has reached the store's last write to the kind,
as the store knows it without asking (``Store.known_revision``: SQLite and memory; never etcd, where
other servers write): then the cache holds every acknowledged write of that kind, as the store would.
Otherwise (a cycle's burst not yet followed, etcd) it reads the store, as before. Why: a read from
SQLite on the event loop gives up the GIL in each call into SQLite and waits to take it back from the
server's worker threads (a cycle's build, its request to the decision worker, its write planning),
0.3-0.5 ms a call and far more on a loaded machine (bench/busy_cycle.py). Nodes are always read from
the store: the cache's copy carries its heartbeat lease. The cache's objects are its own: a caller
reads them and never changes them."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from loadmaster.manifests import NODE, REPLICA, object_ref
from loadmaster.manifests.label_query import LabelQuery, LabelQueryError, parse_label_query
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.errors import InvalidError, NotFoundError
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.runtime.plane.storage.store_layout import (
    OBJECTS,
    decode_object,
    object_key,
    object_of,
    object_prefix,
    parse_object_key,
)
from loadmaster.runtime.requests.reads.event_feed import FeedFailed, Relist, follow, next_revision
from loadmaster.runtime.requests.reads.watch_broadcast import Item
from loadmaster.store.interface import Event

# What a watcher is told of one change: ``put`` or ``delete``, and ``{kind, name, revision, object}``
# (``object`` None for a delete). A plain pair: a bulk rollout sends tens of thousands of them.
ObjectChange = tuple[str, dict[str, Any]]


def parse_selector(text: str | None) -> LabelQuery:
    """A label query in kubectl's grammar (``manifests/label_query.py``); a bad one is a 422 naming it."""
    try:
        return parse_label_query(text)
    except LabelQueryError as error:
        raise InvalidError(str(error)) from None


def matches(obj: dict[str, Any], selector: LabelQuery) -> bool:
    return selector.matches(obj.get("metadata", {}).get("labels"))


def _current_objects(plane: ControlPlane, kind: str) -> dict[str, Cached] | None:
    """The cache's objects of ``kind`` when a read may be served from them (module doc), else None."""
    known = plane.store.known_revision(object_prefix(kind))
    if kind == NODE or known is None or plane.cache.revision < known:
        return None
    return plane.cache.objects.get(kind)


async def list_objects(
    plane: ControlPlane, kind: str, selector: LabelQuery
) -> tuple[list[dict[str, Any]], int]:
    """Every object of ``kind`` matching ``selector``, sorted by name, and the revision read at."""
    cached = _current_objects(plane, kind)
    if cached is not None:
        revision = plane.cache.revision
        return [c.obj for _, c in sorted(cached.items()) if matches(c.obj, selector)], revision
    entries, revision = await plane.store.list(object_prefix(kind))
    objects = [object_of(entry) for entry in entries]
    return [obj for obj in objects if matches(obj, selector)], revision


async def get_object(plane: ControlPlane, kind: str, name: str) -> dict[str, Any]:
    cached = _current_objects(plane, kind)
    if cached is not None and (current := cached.get(name)) is not None:
        return current.obj  # not there: deleted, or a stored value the cache could not read
    entry = await plane.store.get(object_key(kind, name))
    if entry is None:
        raise NotFoundError(f"{object_ref(kind, name)} not found")
    return object_of(entry)


async def replicas_on_node(plane: ControlPlane, name: str) -> tuple[list[dict[str, Any]], int]:
    """The replicas bound to node ``name``, by name, and the revision they were read at: every
    assignment made before the call included. NotFoundError for an unknown node."""
    await get_object(plane, NODE, name)
    cache = plane.cache
    await cache.catch_up()
    items = [
        cached.obj
        for _, cached in sorted(cache.objects[REPLICA].items())
        if cached.obj.get("status", {}).get("node_ref") == name
    ]
    return items, cache.revision


def object_change(event: Event, kinds: frozenset[str]) -> ObjectChange | None:
    """What a watcher of ``kinds`` is told about ``event`` (None: it is about something else)."""
    parsed = parse_object_key(event.key)
    if parsed is None or parsed[0] not in kinds:
        return None
    kind, name = parsed
    obj = decode_object(event.value, event.revision) if event.value is not None else None
    return event.kind, {"kind": kind, "name": name, "revision": event.revision, "object": obj}


async def object_feed(
    plane: ControlPlane, kinds: frozenset[str], from_revision: int, idle_s: float
) -> AsyncGenerator[list[ObjectChange | Relist | FeedFailed]]:
    """Every change to objects of ``kinds`` from ``from_revision`` on (0: from now on)."""
    start = from_revision or await next_revision(plane)

    def read(event: Event) -> ObjectChange | None:
        return object_change(event, kinds)

    return follow(plane, OBJECTS, start, read, idle_s)


def broadcast_items(
    kinds: frozenset[str], render: Callable[[ObjectChange], bytes]
) -> Callable[[Event], Item | None]:
    """How the watch broadcast keeps a change to ``kinds``: (kind, revision, ``render`` of it)."""

    def item(event: Event) -> Item | None:
        change = object_change(event, kinds)
        if change is None:
            return None
        data = change[1]
        return data["kind"], data["revision"], render(change)

    return item
