"""Every apply that changes a deployment stores a revision; rollback re-applies the previous one."""

from __future__ import annotations

from typing import Any

import pytest

from loadmaster.manifests import DEPLOYMENT
from loadmaster.manifests.deployment_revisions import KEPT_REVISIONS
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.errors import InvalidError, NotFoundError
from loadmaster.runtime.plane.storage.store_layout import object_key, object_of
from loadmaster.runtime.requests.writes.rollback import rollback_deployment
from tests.controlplane.conftest import apply, deployment

pytestmark = pytest.mark.anyio


async def _status(plane: ControlPlane, name: str = "shop") -> dict[str, Any]:
    entry = await plane.store.get(object_key(DEPLOYMENT, name))
    assert entry is not None
    status: dict[str, Any] = object_of(entry).get("status") or {}
    return status


async def test_the_first_apply_is_revision_1_with_no_previous_revision(plane: ControlPlane) -> None:
    await apply(plane, deployment())
    status = await _status(plane)
    assert (status["applied_revision"], status["previous_revision"]) == (1, None)
    assert status["revisions"][0]["spec"]["services"][0]["image"] == "registry.example/api:1"


async def test_a_changed_apply_stores_the_next_revision_and_an_unchanged_one_stores_nothing(
    plane: ControlPlane,
) -> None:
    await apply(plane, deployment())
    await apply(plane, deployment().replace("api:1", "api:2"))
    await apply(plane, deployment().replace("api:1", "api:2"))
    status = await _status(plane)
    assert (status["applied_revision"], status["previous_revision"]) == (2, 1)
    assert [r["revision"] for r in status["revisions"]] == [1, 2]
    assert status["revisions"][0]["spec_hashes"]["api"] != status["revisions"][1]["spec_hashes"]["api"]


async def test_comments_and_formatting_change_no_hash_but_env_does(plane: ControlPlane) -> None:
    await apply(plane, deployment())
    await apply(plane, "# a comment\n" + deployment().replace("replicas: 3", "replicas:    3"))
    assert (await _status(plane))["applied_revision"] == 1
    await apply(plane, deployment(extra="env: {MODE: fast}"))
    status = await _status(plane)
    assert status["applied_revision"] == 2
    assert status["revisions"][0]["spec_hashes"] != status["revisions"][1]["spec_hashes"]


async def test_only_the_last_revisions_are_kept(plane: ControlPlane) -> None:
    for version in range(KEPT_REVISIONS + 3):
        await apply(plane, deployment().replace("api:1", f"api:{version}"))
    revisions = (await _status(plane))["revisions"]
    assert len(revisions) == KEPT_REVISIONS
    assert revisions[-1]["revision"] == KEPT_REVISIONS + 3


async def test_rollback_applies_the_previous_spec_as_a_new_revision(plane: ControlPlane) -> None:
    await apply(plane, deployment())
    await apply(plane, deployment().replace("api:1", "api:2"))
    answer = await rollback_deployment(plane, "shop", "user")
    assert (answer["from_revision"], answer["to_spec_of"], answer["revision"]) == (2, 1, 3)
    entry = await plane.store.get(object_key(DEPLOYMENT, "shop"))
    assert entry is not None
    stored = object_of(entry)
    assert stored["spec"]["services"][0]["image"] == "registry.example/api:1"
    assert (stored["status"]["applied_revision"], stored["status"]["previous_revision"]) == (3, 2)


async def test_rollback_without_a_previous_revision_is_refused_naming_it_and_stores_nothing(
    plane: ControlPlane,
) -> None:
    await apply(plane, deployment())
    before = await plane.store.revision()
    with pytest.raises(InvalidError) as refused:
        await rollback_deployment(plane, "shop", "user")
    assert "previous_revision" in refused.value.message
    assert [p.path for p in refused.value.problems] == ["previous_revision"]
    assert await plane.store.revision() == before


async def test_rollback_of_an_unknown_deployment_is_not_found(plane: ControlPlane) -> None:
    with pytest.raises(NotFoundError):
        await rollback_deployment(plane, "nope", "user")
