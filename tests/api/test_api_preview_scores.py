"""Preview's numbers are for people: scores are parts of a 0..100 total, and an order scorer
(rendezvous, a 64-bit hash) is shown as the node's rank by it."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio


async def _preview(api: Api, text: str) -> list[dict[str, object]]:
    response = await api.user.post(
        "/api/scheduling/preview", content=text, headers={"Content-Type": "application/yaml"}
    )
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


async def test_a_spread_replicas_candidates_are_ranked_not_shown_as_hashes(api: Api) -> None:
    for name in ("n1", "n2", "n3"):
        await api.register(name)
    items = await _preview(api, deployment(replicas=1, extra="placement: spread"))
    candidates = items[0]["candidates"]
    assert isinstance(candidates, list) and len(candidates) == 3
    assert [c["total"] for c in candidates] == [1, 2, 3]
    # spread ranks by fewest replicas of the service, then rendezvous hashing
    # (placement/plugins/scorers/service_spread.py)
    assert [c["scores"]["service_spread"] for c in candidates] == [1, 2, 3]
    assert all(c["ranked_by"] == ["service_spread"] for c in candidates)
    assert items[0]["node"] == candidates[0]["node"]


async def test_a_scored_replicas_scores_add_up_to_a_total_between_0_and_100(api: Api) -> None:
    for name in ("n1", "n2"):
        await api.register(name)
    # the default profile scores (spread and pack rank by replica counts: see the test above)
    items = await _preview(api, deployment(replicas=1, extra="profile: default"))
    for candidate in items[0]["candidates"]:
        assert 0 <= candidate["total"] <= 100
        assert "ranked_by" not in candidate
        assert all(0 <= score <= 100 for score in candidate["scores"].values())
