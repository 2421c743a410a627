"""The simulated agent's options: node capacity, labels and names."""

from __future__ import annotations

import pytest

from loadmaster.agent.host.node_shape import NodeShape, ShapeError, node_names, parse_capacity, parse_labels


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("cpu=8,memory=32Gi", {"cpu": "8", "memory": "32Gi"}, id="cpu-and-memory"),
        pytest.param(
            "cpu=8, memory=32Gi ,gpu=4", {"cpu": "8", "memory": "32Gi", "gpu": "4"}, id="spaces-ignored"
        ),
        pytest.param("cpu=500m,", {"cpu": "500m"}, id="a-trailing-comma-is-harmless"),
    ],
)
def test_capacity_text_becomes_a_resource_mapping(text: str, expected: dict[str, str]) -> None:
    assert parse_capacity(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("cpu=-1", "--capacity: cpu: negative quantity", id="negative"),
        pytest.param("memory=lots", '--capacity: memory: bad quantity "lots"', id="unparseable"),
        pytest.param("cpu", '--capacity: expected key=value, got "cpu"', id="no-equals-sign"),
        pytest.param("cpu=1,cpu=2", "--capacity: cpu is given twice", id="duplicate"),
        pytest.param("", "--capacity: give at least one resource", id="empty"),
        pytest.param("CPU=1", "--capacity: CPU: bad resource name", id="uppercase-resource"),
    ],
)
def test_bad_capacity_is_refused_naming_the_option_and_the_part(text: str, message: str) -> None:
    with pytest.raises(ShapeError) as refused:
        parse_capacity(text)
    assert str(refused.value).startswith(message)


def test_labels_text_becomes_a_mapping_and_duplicates_are_refused() -> None:
    assert parse_labels("zone=a,tier=gpu") == {"zone": "a", "tier": "gpu"}
    assert parse_labels("") == {}
    with pytest.raises(ShapeError, match="--labels: zone is given twice"):
        parse_labels("zone=a,zone=b")


@pytest.mark.parametrize(
    ("prefix", "count", "first", "last"),
    [
        pytest.param("sim", 3, "sim-01", "sim-03", id="two-digits-at-least"),
        pytest.param("node", 1000, "node-0001", "node-1000", id="padded-to-sort-in-order"),
    ],
)
def test_node_names_are_numbered_and_sort_in_creation_order(
    prefix: str, count: int, first: str, last: str
) -> None:
    names = node_names(prefix, count)
    assert (names[0], names[-1], len(names)) == (first, last, count)
    assert names == sorted(names)


@pytest.mark.parametrize(
    ("prefix", "count", "message"),
    [
        pytest.param("Sim", 2, "not DNS-safe", id="uppercase-prefix"),
        pytest.param("x" * 62, 2, "at most 63", id="too-long"),
        pytest.param("sim", 0, "at least 1 node", id="zero-nodes"),
    ],
)
def test_node_names_that_no_node_can_have_are_refused(prefix: str, count: int, message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        node_names(prefix, count)


def test_the_registration_body_has_every_field_the_api_names() -> None:
    shape = NodeShape(capacity={"cpu": "8"}, labels={"zone": "a"})
    assert shape.registration("sim-01") == {
        "name": "sim-01",
        "labels": {"zone": "a"},
        "capacity": {"cpu": "8"},
        "system_reserved": {},
        "taints": [],
        "network": {},
    }
