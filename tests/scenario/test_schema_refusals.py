"""Bad scenario input is refused with the YAML path of the offending field and a message saying why.

Each case edits one valid base document at the given paths (``DELETE`` removes a key), loads it, and
checks the exact error path and a fragment of the message.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
import yaml_rs

from loadmaster.scenario.schema import ScenarioError, parse_scenario

DELETE = object()

BASE: dict[str, Any] = {
    "name": "base-case",
    "config": {"actions": ["allocate", "reclaim"]},
    "nodes": [
        {"name": "node-0", "labels": {"zone": "a"}, "capacity": {"cpu": 8, "memory": "32Gi", "gpu": 4}},
        {"name": "node-1", "capacity": {"cpu": 8, "memory": "32Gi"}},
    ],
    "queues": [{"name": "dept"}, {"name": "team-a", "parent": "dept"}],
    "jobs": [
        {
            "name": "train",
            "queue": "team-a",
            "tasks": [
                {"name": "train-0", "request": {"cpu": 1, "gpu": 1}, "status": "Running", "node": "node-0"},
                {"name": "train-1", "request": {"cpu": 1}},
            ],
        },
        {"name": "serve", "tasks": [{"name": "serve-0", "request": {"cpu": 2, "memory": "1Gi"}}]},
    ],
    "expect": {"tasks": {"train-1": {"status": "Running", "node": "node-0"}}},
}

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def edited(edits: dict[str, object]) -> str:
    """The base document with each ``path: value`` edit applied, as YAML text."""
    document = copy.deepcopy(BASE)
    for path, value in edits.items():
        steps: list[str | int] = [key if key else int(index) for key, index in _STEP.findall(path)]
        parent: Any = document
        for step in steps[:-1]:
            parent = parent.setdefault(step, {}) if isinstance(step, str) else parent[step]
        if value is DELETE:
            del parent[steps[-1]]
        elif isinstance(steps[-1], int) and steps[-1] == len(parent):
            parent.append(value)
        else:
            parent[steps[-1]] = value
    return yaml_rs.dumps(document)


def test_the_base_document_of_the_refusal_table_is_valid() -> None:
    assert parse_scenario(edited({})).name == "base-case"


TASK = "jobs[0].tasks[1]"
RUNNING = "jobs[0].tasks[0]"

CASES = [
    # unknown keys and wrong types
    pytest.param(
        {"nodes[0].capcity": {"cpu": 1}},
        "nodes[0].capcity",
        "unknown field; did you mean capacity?",
        id="unknown-node-field-with-suggestion",
    ),
    pytest.param({"nodez": []}, "nodez", "did you mean nodes?", id="unknown-top-level-field"),
    pytest.param(
        {f"{TASK}.tolerations": [{"key": "k", "efect": "NoSchedule"}]},
        f"{TASK}.tolerations[0].efect",
        "did you mean effect?",
        id="unknown-field-deep-inside-a-list",
    ),
    pytest.param({"nodes": {"node-0": {}}}, "nodes", "expected a list, got mapping", id="nodes-not-a-list"),
    pytest.param(
        {"jobs[0].priority": "high"},
        "jobs[0].priority",
        "expected an integer, got string",
        id="priority-not-an-integer",
    ),
    pytest.param(
        {"queues[0].over_quota_weight": True},
        "queues[0].over_quota_weight",
        "expected a number, got boolean",
        id="boolean-where-a-number-is-expected",
    ),
    pytest.param(
        {"nodes[1].unschedulable": "yes"},
        "nodes[1].unschedulable",
        "expected true or false",
        id="string-where-a-boolean-is-expected",
    ),
    pytest.param(
        {"nodes[0].labels.zone": ["a"]}, "nodes[0].labels.zone", "expected a string", id="label-value-a-list"
    ),
    pytest.param({"name": DELETE}, "name", "required field is missing", id="name-missing"),
    pytest.param({"name": "Base_Case"}, "name", "must be kebab-case", id="name-not-kebab-case"),
    pytest.param({f"{TASK}.name": None}, f"{TASK}.name", "required field is missing", id="task-name-null"),
    # duplicate names
    pytest.param(
        {"nodes[1].name": "node-0"},
        "nodes[1].name",
        'duplicate node name "node-0" (first at nodes[0])',
        id="duplicate-node",
    ),
    pytest.param(
        {"queues[2]": {"name": "dept"}}, "queues[2].name", 'duplicate queue name "dept"', id="duplicate-queue"
    ),
    pytest.param(
        {"jobs[1].name": "train"},
        "jobs[1].name",
        'duplicate job name "train" (first at jobs[0])',
        id="duplicate-job",
    ),
    pytest.param(
        {"jobs[1].tasks[0].name": "train-1"},
        "jobs[1].tasks[0].name",
        'duplicate task name "train-1" (first at jobs[0].tasks[1])',
        id="duplicate-task-across-jobs",
    ),
    pytest.param(
        {"nodes[0].volumes": [{"name": "v", "size": "1Gi"}, {"name": "v", "size": "2Gi"}]},
        "nodes[0].volumes[1].name",
        'duplicate volume pool name "v"',
        id="duplicate-volume-pool",
    ),
    # quantities
    pytest.param({f"{TASK}.request.cpu": -1}, f"{TASK}.request.cpu", "negative quantity", id="negative-cpu"),
    pytest.param(
        {f"{TASK}.request.memory": "2 GB"},
        f"{TASK}.request.memory",
        'bad quantity "2 GB"',
        id="memory-with-a-space-and-bad-unit",
    ),
    pytest.param(
        {"nodes[0].capacity.memory": "32Gb"},
        "nodes[0].capacity.memory",
        'unknown unit "Gb"',
        id="unknown-unit",
    ),
    pytest.param(
        {"nodes[0].capacity.CPU": 1}, "nodes[0].capacity.CPU", "bad resource name", id="resource-name"
    ),
    pytest.param(
        {f"{TASK}.request.cpu": None},
        f"{TASK}.request.cpu",
        "expected a quantity, got null",
        id="null-quantity",
    ),
    pytest.param(
        {"nodes[0].volumes": [{"name": "v", "size": "lots"}]},
        "nodes[0].volumes[0].size",
        'bad quantity "lots"',
        id="bad-volume-size",
    ),
    pytest.param(
        {"nodes[0].network": {"download": "fast"}},
        "nodes[0].network.download",
        'bad throughput "fast"',
        id="bad-throughput",
    ),
    pytest.param(
        {"jobs[0].stale_for": "soon"}, "jobs[0].stale_for", 'bad duration "soon"', id="bad-duration"
    ),
    pytest.param(
        {"config.staleness_grace_period": -5},
        "config.staleness_grace_period",
        "negative duration",
        id="negative-grace-period",
    ),
    # bindings
    pytest.param(
        {f"{RUNNING}.node": DELETE},
        f"{RUNNING}.node",
        "required: a Running task names the node",
        id="running-without-node",
    ),
    pytest.param(
        {f"{TASK}.status": "Releasing"},
        f"{TASK}.node",
        "required: a Releasing task",
        id="releasing-without-node",
    ),
    pytest.param(
        {f"{TASK}.node": "node-0"},
        f"{TASK}.node",
        "node is only for Running or Releasing tasks; use previous_node for stickiness",
        id="pending-with-node",
    ),
    pytest.param(
        {f"{RUNNING}.node": "node-9"},
        f"{RUNNING}.node",
        'unknown node "node-9"',
        id="running-on-unknown-node",
    ),
    pytest.param(
        {f"{RUNNING}.request.cpu": 9},
        "nodes[0]",
        "cpu requested 9 > allocatable 8",
        id="node-over-committed-by-one-task",
    ),
    # overcommit (B8): opted-in running work may fill allocatable x factor, other work allocatable only
    pytest.param(
        {f"{RUNNING}.request.cpu": 9, "nodes[0].overcommit": {"cpu": 1.5}},
        "nodes[0]",
        "cpu requested 9 > allocatable 8",
        id="node-over-committed-by-a-task-that-did-not-opt-in",
    ),
    pytest.param(
        {f"{RUNNING}.request.cpu": 13, "nodes[0].overcommit": {"cpu": 1.5}, "jobs[0].overcommit": True},
        "nodes[0]",
        "cpu requested 13 > allocatable x overcommit 1.5 = 12",
        id="node-over-committed-past-its-overcommit-factor",
    ),
    pytest.param(
        {"nodes[0].overcommit": {"cpu": 0.5}},
        "nodes[0].overcommit.cpu",
        "bad factor 0.5: must be >= 1 (1 = no overcommit)",
        id="overcommit-factor-below-one",
    ),
    pytest.param(
        {"nodes[0].overcommit": {"memory": "lots"}},
        "nodes[0].overcommit.memory",
        'bad factor "lots": expected a number >= 1',
        id="overcommit-factor-not-a-number",
    ),
    pytest.param(
        {"nodes[0].overcommit": {"gpu": 2}},
        "nodes[0].overcommit",
        'unknown resource "gpu": overcommit applies to cpu and memory',
        id="overcommit-of-an-unknown-resource",
    ),
    pytest.param(
        {"jobs[1].overcommit": "yes"},
        "jobs[1].overcommit",
        "expected true or false",
        id="job-overcommit-not-a-boolean",
    ),
    pytest.param(
        {f"{TASK}.status": "Releasing", f"{TASK}.node": "node-0", f"{TASK}.request.memory": "33Gi"},
        "nodes[0]",
        "memory requested 33Gi > allocatable 32Gi",
        id="node-over-committed-with-releasing",
    ),
    pytest.param(
        {f"{RUNNING}.node": "node-1"},
        "nodes[1]",
        "gpu requested 1 > allocatable 0",
        id="running-gpu-task-on-a-node-without-gpus",
    ),
    # nodes and requests
    pytest.param(
        {"nodes[0].allocatable": {"cpu": 9}},
        "nodes[0].allocatable.cpu",
        "allocatable 9 exceeds capacity 8",
        id="allocatable-above-capacity",
    ),
    pytest.param(
        {"nodes[0].capacity.gpu": 1.5},
        "nodes[0].capacity.gpu",
        "whole number of gpu devices, got 1.5",
        id="fractional-gpu-capacity",
    ),
    pytest.param(
        {f"{TASK}.request.gpu": 1.5},
        f"{TASK}.request.gpu",
        "must be a whole number, got 1.5",
        id="fractional-gpu-request-above-one",
    ),
    pytest.param(
        {"nodes[0].license_tier": "gold"},
        "nodes[0].license_tier",
        'unknown license tier "gold"',
        id="node-license-tier-unknown",
    ),
    pytest.param(
        {"config.license_tiers": ["free", "paid"], f"{TASK}.license_tier": "team"},
        f"{TASK}.license_tier",
        "config.license_tiers: free, paid",
        id="task-license-tier-not-configured",
    ),
    pytest.param(
        {"nodes[0].state": "Redy"},
        "nodes[0].state",
        'bad value "Redy": expected one of Ready, NotReady',
        id="bad-state",
    ),
    pytest.param(
        {"nodes[0].taints": [{"key": "k", "effect": "NoSchedul"}]},
        "nodes[0].taints[0].effect",
        "did you mean NoSchedule?",
        id="bad-taint-effect",
    ),
    pytest.param(
        {f"{TASK}.tolerations": [{"key": "k", "operator": "Equals"}]},
        f"{TASK}.tolerations[0].operator",
        "expected one of Equal, Exists",
        id="bad-toleration-operator",
    ),
    pytest.param(
        {f"{TASK}.tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
        f"{TASK}.tolerations[0].value",
        "takes no value",
        id="exists-toleration-with-value",
    ),
    pytest.param({f"{TASK}.ports": [8080, 0]}, f"{TASK}.ports[1]", "must be at least 1", id="port-zero"),
    pytest.param(
        {f"{TASK}.ports": [65536]}, f"{TASK}.ports[0]", "must be at most 65535", id="port-too-large"
    ),
    pytest.param(
        {f"{TASK}.runtime": {"versions": {"cml": "2.7"}}},
        f"{TASK}.runtime.versions.cml",
        'bad version specifier "2.7"',
        id="specifier-without-operator",
    ),
    pytest.param(
        {"nodes[0].runtime": {"versions": {"cml": "two"}}},
        "nodes[0].runtime.versions.cml",
        'bad version "two"',
        id="node-version-not-pep440",
    ),
    pytest.param(
        {"nodes[0].runtime": {"versions": {"cml": 2.10}}},
        "nodes[0].runtime.versions.cml",
        "quote it",
        id="node-version-as-a-yaml-float",
    ),
    # selectors and affinity
    pytest.param(
        {f"{TASK}.topology_spread_constraints": [{"max_skew": 0, "topology_key": "zone"}]},
        f"{TASK}.topology_spread_constraints[0].max_skew",
        "must be at least 1",
        id="max-skew-zero",
    ),
    pytest.param(
        {
            f"{TASK}.topology_spread_constraints": [
                {"max_skew": 1, "topology_key": "zone", "when_unsatisfiable": "Never"}
            ]
        },
        f"{TASK}.topology_spread_constraints[0].when_unsatisfiable",
        "DoNotSchedule, ScheduleAnyway",
        id="bad-when-unsatisfiable",
    ),
    pytest.param(
        {
            f"{TASK}.topology_spread_constraints": [
                {
                    "max_skew": 1,
                    "topology_key": "zone",
                    "label_selector": {
                        "match_expressions": [{"key": "n", "operator": "Gt", "values": ["1"]}]
                    },
                }
            ]
        },
        f"{TASK}.topology_spread_constraints[0].label_selector.match_expressions[0].operator",
        'bad value "Gt"',
        id="numeric-operator-in-a-spread-selector",
    ),
    pytest.param(
        {f"{TASK}.preferred_node_affinity": [{"weight": 0, "match_labels": {"zone": "a"}}]},
        f"{TASK}.preferred_node_affinity[0].weight",
        "must be at least 1",
        id="preferred-weight-zero",
    ),
    pytest.param(
        {f"{TASK}.preferred_node_affinity": [{"weight": 101}]},
        f"{TASK}.preferred_node_affinity[0].weight",
        "must be at most 100",
        id="preferred-weight-101",
    ),
    pytest.param(
        {f"{TASK}.required_node_affinity": [{"key": "zone", "operator": "Near", "values": ["a"]}]},
        f"{TASK}.required_node_affinity[0].operator",
        'bad value "Near"',
        id="bad-affinity-operator",
    ),
    pytest.param(
        {f"{TASK}.required_node_affinity": [{"key": "rack", "operator": "Gt", "values": ["x"]}]},
        f"{TASK}.required_node_affinity[0].values[0]",
        'needs an integer, got "x"',
        id="gt-with-a-non-integer",
    ),
    pytest.param(
        {f"{TASK}.required_node_affinity": [{"key": "zone", "operator": "In"}]},
        f"{TASK}.required_node_affinity[0].values",
        "needs at least one value",
        id="in-without-values",
    ),
    # jobs and queues
    pytest.param(
        {"jobs[0].min_available": 0}, "jobs[0].min_available", "must be at least 1", id="min-available-zero"
    ),
    pytest.param(
        {"jobs[0].min_available": 3},
        "jobs[0].min_available",
        "3 exceeds the job's number of tasks (2)",
        id="min-available-above-task-count",
    ),
    pytest.param({"jobs[1].tasks": []}, "jobs[1].tasks", "at least one task", id="job-without-tasks"),
    pytest.param(
        {"queues[1].parent": "dpt"},
        "queues[1].parent",
        'unknown queue "dpt"; did you mean dept?',
        id="queue-parent-unknown",
    ),
    pytest.param(
        {"queues[0].parent": "team-a"},
        "queues[0].parent",
        "cycle in queue parents: dept -> team-a -> dept",
        id="queue-cycle",
    ),
    pytest.param(
        {"queues[0].parent": "dept"},
        "queues[0].parent",
        "cycle in queue parents: dept -> dept",
        id="queue-its-own-parent",
    ),
    pytest.param({"jobs[0].queue": "dept"}, "jobs[0].queue", "is a parent queue", id="job-in-a-parent-queue"),
    pytest.param(
        {"jobs[0].queue": "team-b"}, "jobs[0].queue", 'unknown queue "team-b"', id="job-queue-unknown"
    ),
    pytest.param(
        {"queues[1].parent": "default"},
        "queues[1].parent",
        'unknown queue "default"',
        id="implicit-default-cannot-be-a-parent",
    ),
    # config
    pytest.param(
        {"config.actions[2]": "allocat"}, "config.actions[2]", 'unknown action "allocat"', id="unknown-action"
    ),
    pytest.param(
        {"config.strategy": "pack"},
        "config.strategy",
        "expected one of binpack, spread, balanced",
        id="bad-strategy",
    ),
    pytest.param({"config.profile": "fastest"}, "config.profile", 'bad value "fastest"', id="bad-profile"),
    pytest.param(
        {"config.max_eviction_ratio": -1},
        "config.max_eviction_ratio",
        "must be at least 0",
        id="negative-eviction-ratio",
    ),
    pytest.param(
        {"config.max_consolidation_moves": 1.5},
        "config.max_consolidation_moves",
        "expected an integer",
        id="fractional-consolidation-moves",
    ),
    pytest.param(
        {"config.license_tiers": ["a", "a"]},
        "config.license_tiers[1]",
        'duplicate license tier "a"',
        id="duplicate-license-tier",
    ),
    # expect
    pytest.param(
        {"expect.tasks.train-9": {"status": "Running"}},
        "expect.tasks.train-9",
        'unknown task "train-9"',
        id="expect-unknown-task",
    ),
    pytest.param(
        {"expect.tasks.train-1.status": "Done"},
        "expect.tasks.train-1.status",
        "expected one of Running, Pipelined, Pending, Evicted, Moved",
        id="expect-bad-status",
    ),
    pytest.param(
        {"expect.tasks.train-1.node": "node-7"},
        "expect.tasks.train-1.node",
        'unknown node "node-7"',
        id="expect-unknown-node",
    ),
    pytest.param(
        {"expect.tasks.train-1.status": "Pending"},
        "expect.tasks.train-1.node",
        "on no node",
        id="expect-pending-on-a-node",
    ),
    pytest.param({"expect.task": {}}, "expect.task", "did you mean tasks?", id="expect-unknown-field"),
]


@pytest.mark.parametrize(("edits", "path", "fragment"), CASES)
def test_bad_input_is_refused_naming_its_yaml_path(
    edits: dict[str, object], path: str, fragment: str
) -> None:
    with pytest.raises(ScenarioError) as error:
        parse_scenario(edited(edits))
    assert error.value.path == path
    assert fragment in error.value.message
    assert str(error.value) == f"{path}: {error.value.message}"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("- name: a\n", "the top level must be a mapping", id="a-list"),
        pytest.param("just text\n", "the top level must be a mapping", id="a-string"),
        pytest.param("", "got null", id="empty-file"),
        pytest.param("name: a\nnodes: [\n", "not valid YAML at line", id="syntax-error"),
        pytest.param("name: a\n3: x\n", "field names must be strings, got integer 3", id="a-number-as-a-key"),
    ],
)
def test_a_file_that_is_not_a_yaml_mapping_is_refused_as_a_whole(text: str, fragment: str) -> None:
    with pytest.raises(ScenarioError) as error:
        parse_scenario(text)
    assert error.value.path == "<file>"
    assert fragment in error.value.message
