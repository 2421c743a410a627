"""Preview says what an apply of the same file would do: unchanged replicas keep their names and nodes,
a scale-up adds the next index, and a changed spec's new replicas meet the old ones still holding their
nodes (their ports too)."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio


async def _preview(api: Api, text: str) -> dict[str, dict[str, object]]:
    response = await api.user.post(
        "/api/scheduling/preview", content=text, headers={"Content-Type": "application/yaml"}
    )
    assert response.status_code == 200, response.text
    return {str(item["replica"]): item for item in response.json()["items"]}


async def test_previewing_what_is_applied_changes_nothing_and_keeps_the_names(api: Api) -> None:
    await api.register("n1")
    await api.register("n2")
    await api.apply(deployment(replicas=2))
    placed = await api.wait_phases({"shop-api-0": "Scheduled", "shop-api-1": "Scheduled"})
    same = await _preview(api, deployment(replicas=2))
    assert set(same) == {"shop-api-0", "shop-api-1"}
    for name, item in same.items():
        assert item["stays"] is True and item["node"] == placed[name]["status"]["node_ref"]
    scaled = await _preview(api, deployment(replicas=3))
    assert set(scaled) == {"shop-api-0", "shop-api-1", "shop-api-2"}
    assert "stays" not in scaled["shop-api-2"] and scaled["shop-api-2"]["node"] in ("n1", "n2")
    assert set(await _preview(api, deployment(replicas=1))) == {"shop-api-0"}  # the highest index goes


async def test_a_changed_spec_meets_the_old_replicas_still_holding_their_ports(api: Api) -> None:
    await api.register("n1")
    await api.apply(deployment(replicas=1, extra="ports: [8080]"))
    await api.wait_phases({"shop-api-0": "Scheduled"})
    changed = await _preview(api, deployment(replicas=1, extra="ports: [8080]").replace("api:1", "api:2"))
    # Since the rollout merge a changed spec replaces a replica make-before-break under its own name: the
    # replacement shop-api-0.next is placed while shop-api-0 runs (it used to be a new shop-api-1).
    assert set(changed) == {"shop-api-0.next"}
    item = changed["shop-api-0.next"]
    assert item["node"] is None  # the old replica still holds port 8080 on the only node
    assert item["rejections"]["summary"] == {"ports": 1}


async def test_a_changed_spec_of_two_replicas_is_previewed_as_the_rollouts_first_step(api: Api) -> None:
    await api.register("n1")
    await api.register("n2")
    await api.apply(deployment(replicas=2))
    placed = await api.wait_phases({"shop-api-0": "Scheduled", "shop-api-1": "Scheduled"})
    for name in placed:
        await api.agent.put(f"/api/replicas/{name}/status", json={"phase": "Running"})
    await api.wait_phases({"shop-api-0": "Running", "shop-api-1": "Running"})
    changed = await _preview(api, deployment(replicas=2).replace("api:1", "api:2"))
    # one replica at a time (controllers/deployments/rollout.py): the lowest index is replaced, the other
    # runs on
    assert set(changed) == {"shop-api-0.next", "shop-api-1"}
    assert changed["shop-api-1"]["stays"] is True
    assert changed["shop-api-1"]["node"] == placed["shop-api-1"]["status"]["node_ref"]
