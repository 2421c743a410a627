"""Reading stored objects for the API: straight from the store, so a reader sees its own writes, and
followed live (``object_feed``) for watchers."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from loadmaster.manifests import NODE, REPLICA, object_ref
from loadmaster.manifests.label_query import LabelQuery, LabelQueryError, parse_label_query
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.errors import InvalidError, NotFoundError
from loadmaster.runtime.plane.storage.store_layout import (
    OBJECTS,
    decode_object,
    object_key,
    object_of,
    object_prefix,
    parse_object_key,
)
from loadmaster.runtime.requests.event_feed import FeedFailed, Relist, follow, next_revision
from loadmaster.runtime.requests.watch_broadcast import Item
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


async def list_objects(
    plane: ControlPlane, kind: str, selector: LabelQuery
) -> tuple[list[dict[str, Any]], int]:
    """Every object of ``kind`` matching ``selector``, sorted by name, and the revision read at."""
    entries, revision = await plane.store.list(object_prefix(kind))
    objects = [object_of(entry) for entry in entries]
    return [obj for obj in objects if matches(obj, selector)], revision


async def get_object(plane: ControlPlane, kind: str, name: str) -> dict[str, Any]:
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
