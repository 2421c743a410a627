"""The scenario reader and the manifest validator agree on the constraint fields they share.

Both formats take these fields under the same names (``shared/spec/manifests.md``). Each case puts one
value into a task of a scenario and into a service of a Deployment (or into a node of each): both must
accept it, or both refuse it at the same field below the task (or node). The rules themselves are
shared (``loadmaster.fields``); how a value is read (types, defaults) is each format's own.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml_rs

from loadmaster.manifests import ManifestErrors, manifest_from_object
from loadmaster.scenario.schema import ScenarioError, parse_scenario

OK = None  # the expected field of a refusal, or OK: accepted by both

EXPRESSION_IN_SPREAD = {"max_skew": 1, "topology_key": "zone", "label_selector": {"match_expressions": []}}


def spread_with(expression: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**EXPRESSION_IN_SPREAD, "label_selector": {"match_expressions": [expression]}}]


def preferred_with(expression: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"weight": 10, "match_expressions": [expression]}]


TASK_CASES = [
    # compose GPU requests (fields/gpu_requests.py)
    pytest.param("gpus", "all", OK, id="gpus-all"),
    pytest.param(
        "gpus",
        [{"driver": "nvidia", "count": 2, "capabilities": ["gpu", "compute"]}],
        OK,
        id="gpus-device-list",
    ),
    pytest.param("gpus", [{"count": "all"}], OK, id="gpus-device-list-count-all"),
    pytest.param("gpus", [{"count": 1}, {"count": 1}], "gpus", id="gpus-two-device-requests"),
    pytest.param("gpus", [], "gpus", id="gpus-empty-device-list"),
    pytest.param("gpus", [{"count": 0}], "gpus[0].count", id="gpus-count-zero"),
    pytest.param("gpus", [{"count": 1.5}], "gpus[0].count", id="gpus-count-not-whole"),
    pytest.param("gpus", [{"device_ids": ["0"]}], "gpus[0].device_ids", id="gpus-unknown-device-field"),
    pytest.param(
        "gpus", [{"capabilities": "gpu"}], "gpus[0].capabilities", id="gpus-capabilities-not-a-list"
    ),
    pytest.param("gpus", [{"driver": ""}], "gpus[0].driver", id="gpus-empty-driver"),
    pytest.param("gpus", "most", "gpus", id="gpus-word-not-all"),
    pytest.param("gpus", 1.5, "gpus", id="gpus-count-above-one-not-whole"),
    # tolerations
    pytest.param("tolerations", [{"operator": "Exists"}], OK, id="exists-without-key-tolerates-all"),
    pytest.param(
        "tolerations",
        [{"key": "k", "operator": "Exists", "value": "v"}],
        "tolerations[0].value",
        id="exists-value",
    ),
    pytest.param("tolerations", [{"value": "v"}], "tolerations[0].key", id="equal-without-key"),
    pytest.param(
        "tolerations", [{"key": "k", "operator": "Equals"}], "tolerations[0].operator", id="operator"
    ),
    pytest.param("tolerations", [{"key": "k", "effect": "NoSchedul"}], "tolerations[0].effect", id="effect"),
    # label expressions (preferred node affinity: every operator)
    pytest.param(
        "preferred_node_affinity",
        preferred_with({"key": "rack", "operator": "Gt", "values": ["3"]}),
        OK,
        id="gt-one-integer",
    ),
    pytest.param(
        "preferred_node_affinity",
        preferred_with({"key": "rack", "operator": "Lt", "values": ["x"]}),
        "preferred_node_affinity[0].match_expressions[0].values[0]",
        id="lt-not-an-integer",
    ),
    pytest.param(
        "preferred_node_affinity",
        preferred_with({"key": "rack", "operator": "Gt", "values": ["1", "2"]}),
        "preferred_node_affinity[0].match_expressions[0].values",
        id="gt-two-values",
    ),
    pytest.param(
        "preferred_node_affinity",
        preferred_with({"key": "zone", "operator": "In"}),
        "preferred_node_affinity[0].match_expressions[0].values",
        id="in-without-values",
    ),
    pytest.param(
        "preferred_node_affinity",
        preferred_with({"key": "zone", "operator": "Exists", "values": ["a"]}),
        "preferred_node_affinity[0].match_expressions[0].values",
        id="exists-with-values",
    ),
    pytest.param(
        "preferred_node_affinity",
        preferred_with({"key": "zone", "operator": "Near", "values": ["a"]}),
        "preferred_node_affinity[0].match_expressions[0].operator",
        id="unknown-operator",
    ),
    pytest.param(
        "preferred_node_affinity", [{"weight": 0}], "preferred_node_affinity[0].weight", id="weight-0"
    ),
    pytest.param("preferred_node_affinity", [{"weight": 100}], OK, id="weight-100"),
    pytest.param(
        "preferred_node_affinity", [{"weight": 101}], "preferred_node_affinity[0].weight", id="weight-101"
    ),
    # topology spread (a pod label selector: set operators only)
    pytest.param(
        "topology_spread_constraints",
        spread_with({"key": "app", "operator": "NotIn", "values": ["web"]}),
        OK,
        id="spread-set-operator",
    ),
    pytest.param(
        "topology_spread_constraints",
        spread_with({"key": "n", "operator": "Gt", "values": ["1"]}),
        "topology_spread_constraints[0].label_selector.match_expressions[0].operator",
        id="spread-numeric-operator",
    ),
    pytest.param(
        "topology_spread_constraints",
        [{"max_skew": 0, "topology_key": "zone"}],
        "topology_spread_constraints[0].max_skew",
        id="max-skew-0",
    ),
    pytest.param(
        "topology_spread_constraints",
        [{"max_skew": 1, "topology_key": "zone", "when_unsatisfiable": "Never"}],
        "topology_spread_constraints[0].when_unsatisfiable",
        id="when-unsatisfiable",
    ),
    # ports
    pytest.param("ports", [1, 65535], OK, id="port-range-ends"),
    pytest.param("ports", [0], "ports[0]", id="port-0"),
    pytest.param("ports", [65536], "ports[0]", id="port-65536"),
    pytest.param("ports", [80, 80], "ports[1]", id="port-twice"),
    # runtime and volumes
    pytest.param("runtime", {"versions": {"cml": ">=2.7"}}, OK, id="specifier"),
    pytest.param(
        "runtime", {"versions": {"cml": "2.7"}}, "runtime.versions.cml", id="specifier-without-operator"
    ),
    pytest.param("volumes", [{"size": "10Gi", "match_labels": {"type": "ssd"}}], OK, id="volume-claim"),
    pytest.param("volumes", [{"size": "lots"}], "volumes[0].size", id="volume-size"),
    # GPU requests (the scenario calls the field request, a service resources)
    pytest.param("request", {"gpu": 0.5}, OK, id="gpu-share"),
    pytest.param("request", {"gpu": 2}, OK, id="gpu-whole-devices"),
    pytest.param("request", {"gpu": 1.5}, "request.gpu", id="gpu-more-than-one-not-whole"),
]

NODE_CASES = [
    # the GPUs' driver and capabilities (compose device requests match them)
    pytest.param("gpu_driver", "nvidia", OK, id="gpu-driver"),
    pytest.param("gpu_driver", "", "gpu_driver", id="gpu-driver-empty"),
    pytest.param("gpu_capabilities", ["compute", "utility"], OK, id="gpu-capabilities"),
    pytest.param("gpu_capabilities", "compute", "gpu_capabilities", id="gpu-capabilities-not-a-list"),
    # overcommit factors (fields/overcommit.py)
    pytest.param("overcommit", {"cpu": 1.5, "memory": 1}, OK, id="overcommit-factors"),
    pytest.param("overcommit", {"cpu": 0.9}, "overcommit.cpu", id="overcommit-factor-below-one"),
    pytest.param("overcommit", {"cpu": "1.5x"}, "overcommit.cpu", id="overcommit-factor-not-a-number"),
    pytest.param("overcommit", {"memory": True}, "overcommit.memory", id="overcommit-factor-a-boolean"),
    pytest.param("overcommit", {"gpu": 2}, "overcommit", id="overcommit-of-gpus"),
    pytest.param("overcommit", 1.5, "overcommit", id="overcommit-not-a-mapping"),
    pytest.param("taints", [{"key": "k", "effect": "PreferNoSchedule"}], OK, id="taint"),
    pytest.param("taints", [{"key": "k", "effect": "NoEvict"}], "taints[0].effect", id="taint-effect"),
    pytest.param("taints", [{"value": "v"}], "taints[0].key", id="taint-without-key"),
    pytest.param("runtime", {"versions": {"cml": "2.7.1"}}, OK, id="version"),
    pytest.param("runtime", {"versions": {"cml": "two"}}, "runtime.versions.cml", id="version-not-pep440"),
    pytest.param("capacity", {"cpu": 4, "gpu": 1.5}, "capacity.gpu", id="fractional-gpu-capacity"),
    pytest.param(
        "volumes",
        [{"name": "v", "size": "1Gi"}, {"name": "v", "size": "2Gi"}],
        "volumes[1].name",
        id="pool-twice",
    ),
]


def scenario_refusal(path: str, document: dict[str, Any]) -> str | None:
    """The field (below ``path``) the scenario reader refuses, or None if it accepts the document."""
    try:
        parse_scenario(yaml_rs.dumps(document))
    except ScenarioError as error:
        assert error.path.startswith(f"{path}."), error
        return error.path.removeprefix(f"{path}.")
    return None


def manifest_refusals(path: str, obj: dict[str, Any]) -> list[str]:
    """Every field (below ``path``) the manifest validator refuses; empty if it accepts the object."""
    try:
        manifest_from_object(obj)
    except ManifestErrors as errors:
        assert all(error.path.startswith(f"{path}.") for error in errors.errors), errors
        return [error.path.removeprefix(f"{path}.") for error in errors.errors]
    return []


@pytest.mark.parametrize(("field", "value", "refused_at"), TASK_CASES)
def test_a_task_field_is_refused_by_both_formats_at_the_same_place_or_by_neither(
    field: str, value: object, refused_at: str | None
) -> None:
    task = {"name": "t0", "request": {"cpu": 1}, field: value}
    scenario = {
        "name": "agree",
        "nodes": [{"name": "n0", "capacity": {"cpu": 8}}],
        "jobs": [{"name": "j", "tasks": [task]}],
    }
    service = {"name": "api", "image": "api:1", "resources": {"cpu": 1}}
    service[field if field != "request" else "resources"] = value
    deployment = {
        "api_version": "loadmaster/v1",
        "kind": "Deployment",
        "metadata": {"name": "shop"},
        "spec": {"services": [service]},
    }

    in_scenario = scenario_refusal("jobs[0].tasks[0]", scenario)
    in_manifest = manifest_refusals("spec.services[0]", deployment)

    assert in_scenario == refused_at
    expected = [] if refused_at is None else [refused_at.replace("request.", "resources.")]
    assert in_manifest == expected


@pytest.mark.parametrize(("field", "value", "refused_at"), NODE_CASES)
def test_a_node_field_is_refused_by_both_formats_at_the_same_place_or_by_neither(
    field: str, value: object, refused_at: str | None
) -> None:
    scenario = {"name": "agree", "nodes": [{"name": "n0", "capacity": {"cpu": 8}, field: value}], "jobs": []}
    node = {
        "api_version": "loadmaster/v1",
        "kind": "Node",
        "metadata": {"name": "n0"},
        "spec": {"capacity": {"cpu": 8}, field: value},
    }

    assert scenario_refusal("nodes[0]", scenario) == refused_at
    assert manifest_refusals("spec", node) == ([] if refused_at is None else [refused_at])
