"""Reading stored objects for the API: straight from the store, so a reader sees its own writes."""

from __future__ import annotations

from typing import Any

from loadmaster.manifests import object_ref
from loadmaster.runtime.plane.errors import InvalidError, NotFoundError
from loadmaster.runtime.plane.store_layout import object_key, object_of, object_prefix
from loadmaster.store.interface import Store


def parse_selector(text: str | None) -> dict[str, str]:
    """``"zone=a,tier=gpu"`` -> ``{"zone": "a", "tier": "gpu"}``; every pair must match."""
    if not text:
        return {}
    pairs: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or not key:
            raise InvalidError(f'selector: expected key=value[,key=value...], got "{part.strip()}"')
        pairs[key.strip()] = value.strip()
    return pairs


def matches(obj: dict[str, Any], selector: dict[str, str]) -> bool:
    labels = obj.get("metadata", {}).get("labels", {}) or {}
    return all(labels.get(key) == value for key, value in selector.items())


async def list_objects(store: Store, kind: str, selector: dict[str, str]) -> tuple[list[dict[str, Any]], int]:
    """Every object of ``kind`` matching ``selector``, sorted by name, and the revision read at."""
    entries, revision = await store.list(object_prefix(kind))
    objects = [object_of(entry) for entry in entries]
    return [obj for obj in objects if matches(obj, selector)], revision


async def get_object(store: Store, kind: str, name: str) -> dict[str, Any]:
    entry = await store.get(object_key(kind, name))
    if entry is None:
        raise NotFoundError(f"{object_ref(kind, name)} not found")
    return object_of(entry)
