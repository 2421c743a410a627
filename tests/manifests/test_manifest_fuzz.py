"""Whatever a client sends, validation answers with a Manifest or with ManifestErrors, never a crash."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.manifests import Manifest, ManifestErrors, manifest_from_object, parse_manifests

EXAMPLES = [m.to_dict() for m in parse_manifests(Path(__file__).with_name("spec_example.yaml").read_text())]
EXAMPLES.append(
    {
        "api_version": "loadmaster/v1",
        "kind": "Replica",
        "metadata": {"name": "shop-api-0"},
        "spec": {
            "owner_kind": "Deployment",
            "owner": "shop",
            "service": "api",
            "index": 0,
            "spec_hash": "0" * 64,
            "image": "a",
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "volumes": [{"size": "1Gi", "match_labels": {"t": "ssd"}}],
            "topology_spread_constraints": [{"max_skew": 1, "topology_key": "zone"}],
        },
        "status": {"phase": "Running", "node_ref": "n1", "conditions": [{"type": "Phase"}]},
    }
)

odd_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6)
    | st.sampled_from(["500m", "2Gi", "-1", "global", "hosts", "NoSchedule", "Exists", "30s", "SIGTERM"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside an object where a value could be replaced."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(paths(item, (*prefix, index)))
    return found


def replaced(obj: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    mutated = copy.deepcopy(obj)
    target: Any = mutated
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return mutated


@settings(max_examples=300)
@given(data=st.data())
def test_any_value_anywhere_is_either_accepted_or_refused_with_manifest_errors(data: st.DataObject) -> None:
    original = data.draw(st.sampled_from(EXAMPLES))
    path = data.draw(st.sampled_from(paths(original)))
    mutated = replaced(original, path, data.draw(odd_values))
    try:
        result = manifest_from_object(mutated)
    except ManifestErrors as refused:
        assert all(error.ref and error.message for error in refused.errors)
        return
    assert isinstance(result, Manifest)
    # Whatever was accepted is plain data that survives a YAML round trip unchanged.
    assert parse_manifests(yaml.safe_dump(result.to_dict())) == [result]
