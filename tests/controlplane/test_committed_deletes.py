"""A delete that is committed succeeds, whatever happens after the commit: the server losing its
leadership before it stops the owner's replicas, or the store losing the answer to the write.
(Both answered 503 for a delete that was in the store.)"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest

from loadmaster.manifests import DEPLOYMENT, parse_manifests
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.errors import NotFoundError
from loadmaster.runtime.plane.leadership.leader_local import LocalLeaderElector
from loadmaster.runtime.plane.storage.store_layout import object_key
from loadmaster.runtime.requests.writes.object_writes import apply_manifests, delete_object
from loadmaster.store.interface import Delete, Fence, Op, UnavailableError
from loadmaster.store.memory import MemoryStore
from loadmaster.testing.fake_clock import FakeClock
from tests.controlplane.conftest import deployment

pytestmark = pytest.mark.anyio

SHOP = object_key(DEPLOYMENT, "shop")


class AfterDeleteCommits(MemoryStore):
    """A real store that does ``then`` right after committing a delete of ``/objects/deployments/shop``."""

    def __init__(self) -> None:
        super().__init__()
        self.then: str | None = None  # "lose-leadership" or "lose-answer"
        self.plane: ControlPlane | None = None

    async def txn(self, ops: Sequence[Op], fence: Fence | None = None) -> int:
        revision = await super().txn(ops, fence)
        if any(isinstance(op, Delete) and op.key == SHOP for op in ops):
            if self.then == "lose-answer":
                raise UnavailableError("request timed out (the write was applied)")
            if self.then == "lose-leadership" and self.plane is not None:
                await self.plane.elector.resign()
        return revision


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    store = AfterDeleteCommits()
    plane = ControlPlane(store, LocalLeaderElector(store, "test-server"), backend="memory", clock=FakeClock())
    store.plane = plane
    await plane.start(run_loops=False)
    await apply_manifests(plane, parse_manifests(deployment("shop")), "user")
    await plane.cache.wait_for(await store.revision())
    assert plane.controllers is not None
    await plane.controllers.reconcile_once(full=True)  # the replicas a delete has to stop
    try:
        yield plane
    finally:
        await plane.close()
        await store.close()


def store_of(plane: ControlPlane) -> AfterDeleteCommits:
    assert isinstance(plane.store, AfterDeleteCommits)
    return plane.store


@pytest.mark.parametrize("then", ["lose-leadership", "lose-answer"])
async def test_a_committed_delete_of_a_deployment_succeeds_whatever_happens_after_the_commit(
    plane: ControlPlane, then: str
) -> None:
    store_of(plane).then = then
    await delete_object(plane, DEPLOYMENT, "shop", "user")  # no refusal: the delete is done
    assert await plane.store.get(SHOP) is None


async def test_a_lost_answer_to_a_delete_that_did_not_land_is_still_an_error(plane: ControlPlane) -> None:
    class LosesEverything(AfterDeleteCommits):
        async def txn(self, ops: Sequence[Op], fence: Fence | None = None) -> int:
            raise UnavailableError("etcd is unreachable")

    store_of(plane).__class__ = LosesEverything
    with pytest.raises(UnavailableError):
        await delete_object(plane, DEPLOYMENT, "shop", "user")
    assert await plane.store.get(SHOP) is not None


async def test_deleting_what_is_not_there_is_still_not_found(plane: ControlPlane) -> None:
    with pytest.raises(NotFoundError):
        await delete_object(plane, DEPLOYMENT, "nothing", "user")
