"""Reads served from the object cache when it is at the store's revision (object_reads.py), from the
store otherwise: either way a reader sees every write acknowledged before its read."""

from __future__ import annotations

from typing import Any

import pytest

from loadmaster.manifests import DEPLOYMENT, NODE
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.reads.object_reads import get_object, list_objects, parse_selector
from tests.controlplane.conftest import add_nodes, apply, catch_up, deployment

pytestmark = pytest.mark.anyio


def store_reads_refused(plane: ControlPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    async def refused(*_: Any) -> Any:
        raise AssertionError("read from the store")

    monkeypatch.setattr(plane.store, "get", refused)
    monkeypatch.setattr(plane.store, "list", refused)


async def test_a_cache_at_the_stores_revision_answers_reads_without_the_store(
    plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    await apply(plane, deployment(name="web", replicas=1))
    await catch_up(plane)
    stored = await get_object(plane, DEPLOYMENT, "web")
    store_reads_refused(plane, monkeypatch)
    assert await get_object(plane, DEPLOYMENT, "web") == stored
    items, revision = await list_objects(plane, DEPLOYMENT, parse_selector(None))
    assert [item["metadata"]["name"] for item in items] == ["web"] and revision == plane.cache.revision


async def test_a_cache_behind_the_store_leaves_the_read_to_the_store_which_has_the_write(
    plane: ControlPlane,
) -> None:
    await apply(plane, deployment(name="web", replicas=1))
    await catch_up(plane)
    async with plane.cache.holding():  # the cache applies nothing meanwhile: it is behind the write
        await apply(plane, deployment(name="web", replicas=3))
        assert plane.cache.revision < (plane.store.known_revision() or 0)
        services = (await get_object(plane, DEPLOYMENT, "web"))["spec"]["services"]
        assert services[0]["replicas"] == 3
        items, _ = await list_objects(plane, DEPLOYMENT, parse_selector(None))
        assert items[0]["spec"]["services"][0]["replicas"] == 3


async def test_nodes_are_read_from_the_store_even_with_the_cache_current(
    plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    await add_nodes(plane, "n1")
    await catch_up(plane)
    store_reads_refused(plane, monkeypatch)
    with pytest.raises(AssertionError, match="read from the store"):
        await get_object(plane, NODE, "n1")


async def test_a_write_to_another_kind_leaves_the_reads_of_this_one_to_the_cache(
    plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    await apply(plane, deployment(name="web", replicas=1))
    await catch_up(plane)
    async with plane.cache.holding():  # behind the node written now, not behind any deployment
        await add_nodes(plane, "n1")
        assert plane.cache.revision < (plane.store.known_revision() or 0)
        store_reads_refused(plane, monkeypatch)
        assert (await get_object(plane, DEPLOYMENT, "web"))["metadata"]["name"] == "web"
