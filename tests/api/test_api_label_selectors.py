"""``GET /api/{kind}?selector=`` in kubectl's grammar, over replicas that carry their owner's labels."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio

JOB = """
api_version: loadmaster/v1
kind: Job
metadata: {name: train, labels: {team: ml}}
spec:
  tasks: 2
  command: [python, train.py]
  resources: {cpu: 100m, memory: 64Mi}
  labels: {role: trainer}
"""


async def _names(api: Api, kind: str, selector: str) -> list[str]:
    response = await api.user.get(f"/api/{kind}", params={"selector": selector})
    assert response.status_code == 200, response.text
    return [item["metadata"]["name"] for item in response.json()["items"]]


async def test_replicas_carry_their_owners_labels_and_their_tasks_own(api: Api) -> None:
    await api.apply(deployment("shop", replicas=2) + "---" + JOB)
    await api.wait_until(lambda: _count(api, 4), "4 replicas")
    replicas = await api.replicas()
    assert replicas["shop-api-0"]["metadata"]["labels"] == {"team": "web"}
    assert replicas["train-1"]["metadata"]["labels"] == {"team": "ml", "role": "trainer"}
    assert await _names(api, "replicas", "team!=web") == ["train-0", "train-1"]
    assert await _names(api, "replicas", "team in (web,ml),!role") == ["shop-api-0", "shop-api-1"]
    assert await _names(api, "replicas", "role notin (trainer)") == ["shop-api-0", "shop-api-1"]
    assert await _names(api, "jobs", "team==ml") == ["train"]


async def _count(api: Api, expected: int) -> bool:
    return len(await api.replicas()) == expected


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param("team in (a", 'expected "," or ")" in the in set, found the end', id="unclosed-set"),
        pytest.param("=web", 'expected a label key, found "="', id="missing-key"),
    ],
)
async def test_a_bad_selector_is_422_saying_what_was_expected(
    shared_api: Api, selector: str, message: str
) -> None:
    response = await shared_api.user.get("/api/replicas", params={"selector": selector})
    assert response.status_code == 422
    assert message in response.json()["message"]
