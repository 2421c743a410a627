"""Admission bounds over real HTTP: numbers beyond the limits are 422s naming the field and the limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.limits import DEFAULT_MAX_REPLICAS, MAX_CPU_CORES, MAX_MEMORY_BYTES
from tests.api.conftest import Api, deployment, open_api

pytestmark = pytest.mark.anyio

JOB = """
api_version: loadmaster/v1
kind: Job
metadata: {{name: {name}}}
spec:
  tasks: {tasks}
  image: registry.example/train:1
  resources: {{cpu: 1}}
"""


def problems_of(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 422, response.text
    errors: list[dict[str, Any]] = response.json()["errors"]
    return errors


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        pytest.param(
            deployment(replicas=10**30),
            "spec.services[0].replicas",
            "at most 9007199254740992",
            id="replicas-1e30",
        ),
        pytest.param(
            deployment(replicas=1_000_000),
            "spec.services[0].replicas",
            f"at most {DEFAULT_MAX_REPLICAS} (the server's --max-replicas)",
            id="replicas-a-million",
        ),
        pytest.param(
            JOB.format(name="big", tasks=10**30), "spec.tasks", "at most 9007199254740992", id="tasks-1e30"
        ),
        pytest.param(
            JOB.format(name="big", tasks=DEFAULT_MAX_REPLICAS + 1),
            "spec.tasks",
            f"at most {DEFAULT_MAX_REPLICAS}",
            id="tasks-over-the-server-limit",
        ),
        pytest.param(
            deployment(cpu='"1e30"'),
            "spec.services[0].resources.cpu",
            "limit of 1000000 cores",
            id="cpu-1e30",
        ),
        pytest.param(
            deployment().replace("memory: 64Mi", "memory: 1e30"),
            "spec.services[0].resources.memory",
            "limit of 1Pi bytes",
            id="memory-1e30",
        ),
        pytest.param(
            "api_version: loadmaster/v1\nkind: Queue\nmetadata: {name: q}\nspec: {deserved: {cpu: 1e30}}\n",
            "spec.deserved.cpu",
            "limit of 1000000 cores",
            id="queue-deserved-1e30",
        ),
        pytest.param(
            deployment(extra="priority: 1000000000000000000000000000000"),
            "spec.services[0].priority",
            "at most 9007199254740992",
            id="priority-1e30",
        ),
    ],
)
async def test_an_apply_beyond_the_bounds_is_422_naming_the_field_and_the_limit(
    shared_api: Api, text: str, path: str, words: str
) -> None:
    before = await shared_api.revision()
    for endpoint in ("/api/apply", "/api/scheduling/preview"):
        if endpoint.endswith("preview") and "kind: Queue" in text:
            continue  # preview takes Deployments and Jobs only
        response = await shared_api.user.post(
            endpoint, content=text, headers={"Content-Type": "application/yaml"}
        )
        assert any(p["path"] == path and words in p["message"] for p in problems_of(response)), (
            response.json()
        )
    assert await shared_api.revision() == before


async def test_a_duplicate_yaml_key_is_422_naming_its_path(shared_api: Api) -> None:
    text = deployment().replace("labels: {team: web}", "labels: {team: web, team: ops}")
    problems = problems_of(await shared_api.apply(text))
    assert [(p["path"], p["message"]) for p in problems] == [
        ("metadata.labels.team", 'the key "team" is given twice (line 4); give it once')
    ]


async def test_the_server_limits_are_configurable(tmp_path: Path) -> None:
    async with open_api(tmp_path, max_replicas=3, max_objects_per_apply=2) as api:
        problems = problems_of(await api.apply(deployment(replicas=4)))
        assert [(p["path"], p["object"]) for p in problems] == [
            ("spec.services[0].replicas", "deployments/shop")
        ]
        assert "must be at most 3" in problems[0]["message"]
        three = "---".join(deployment(name=name, replicas=1) for name in ("a", "b", "c"))
        problems = problems_of(await api.apply(three))
        assert [p["path"] for p in problems] == ["body"]
        assert "3 objects in one request; the server accepts at most 2" in problems[0]["message"]
        assert (await api.apply(deployment(replicas=3))).status_code == 200


@pytest.mark.parametrize(
    ("body", "path", "words"),
    [
        pytest.param(
            {"name": "n1", "capacity": {"cpu": "1e30"}}, "capacity.cpu", "limit", id="capacity-cpu-1e30"
        ),
        pytest.param(
            {"name": "n1", "capacity": {"memory": 1e30}}, "capacity.memory", "limit", id="memory-1e30"
        ),
        pytest.param(
            {"name": "n1", "capacity": {"cpu": "1"}, "labels": {"a": 1}},
            "labels.a",
            "quote it",
            id="label-path",
        ),
        pytest.param(
            {"name": "n1", "capacity": {"cpu": "1"}, "network": {"download": 1e30}},
            "network.download",
            "limit",
            id="network-1e30",
        ),
    ],
)
async def test_a_registration_beyond_the_bounds_is_422_naming_the_body_field(
    shared_api: Api, body: dict[str, object], path: str, words: str
) -> None:
    before = await shared_api.revision()
    problems = problems_of(await shared_api.agent.post("/api/nodes/register", json=body))
    assert any(p["path"] == path and words in p["message"] for p in problems), problems
    assert await shared_api.revision() == before


@pytest.mark.parametrize(
    ("conditions", "path"),
    [
        pytest.param("Ready", "conditions", id="a-string"),
        pytest.param({"type": "Ready"}, "conditions", id="a-mapping"),
        pytest.param([{"type": "Disk"}, 3], "conditions[1]", id="a-number-in-the-list"),
        pytest.param([{"status": "True"}], "conditions[0].type", id="a-condition-without-type"),
    ],
)
async def test_a_heartbeat_with_conditions_of_the_wrong_type_is_422(
    api: Api, conditions: object, path: str
) -> None:
    await api.register("n1")
    response = await api.agent.post("/api/nodes/n1/heartbeat", json={"conditions": conditions})
    assert [p["path"] for p in problems_of(response)] == [path]


@given(
    cpu=st.one_of(
        st.integers(min_value=MAX_CPU_CORES - 2, max_value=MAX_CPU_CORES + 2),
        st.floats(min_value=0, max_value=1e40, allow_nan=False),
        st.integers(min_value=0, max_value=10**40),
    ),
    memory=st.one_of(
        st.integers(min_value=MAX_MEMORY_BYTES - 2, max_value=MAX_MEMORY_BYTES + 2),
        st.integers(min_value=0, max_value=10**40),
    ),
    replicas=st.one_of(
        st.integers(min_value=DEFAULT_MAX_REPLICAS - 1, max_value=DEFAULT_MAX_REPLICAS + 1),
        st.integers(min_value=0, max_value=10**40),
    ),
)
@settings(max_examples=40)
async def test_random_numbers_near_and_beyond_the_limits_are_either_accepted_or_422_naming_the_field(
    shared_api: Api, cpu: float, memory: int, replicas: int
) -> None:
    # Preview runs the real engine on the cluster without storing anything: accepted means placed or
    # explained, never a 500.
    text = deployment(
        replicas=min(replicas, 3) if replicas <= DEFAULT_MAX_REPLICAS else replicas, cpu=repr(cpu)
    )
    text = text.replace("memory: 64Mi", f"memory: {memory}")
    response = await shared_api.user.post(
        "/api/scheduling/preview", content=text, headers={"Content-Type": "application/yaml"}
    )
    assert response.status_code in (200, 422), response.text
    within = cpu <= MAX_CPU_CORES and memory <= MAX_MEMORY_BYTES and replicas <= DEFAULT_MAX_REPLICAS
    assert (response.status_code == 200) is within, response.text
    if response.status_code == 422:
        fields = {p["path"].rsplit(".", 1)[-1] for p in response.json()["errors"]}
        assert fields <= {"cpu", "memory", "replicas"}, response.json()
        assert all("limit" in p["message"] or "at most" in p["message"] for p in response.json()["errors"])
