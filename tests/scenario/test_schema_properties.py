"""Properties of the scenario loader over random valid files.

- Safety of the schema: every random valid scenario loads, in block or flow (JSON) style, and the model
  holds exactly what the file says (names in order, canonical quantities, bindings, defaults).
- Completeness of the key check: an unknown key added to any fixed-schema mapping of a valid file is
  refused with exactly that key's path (every mapping of ``every_field.yaml``, and random files).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml_rs
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.model import DEFAULT_QUEUE, TaskStatus
from loadmaster.scenario.schema import ScenarioError, parse_scenario

GI = 2**30
EVERY_FIELD_DOCUMENT: dict[str, Any] = yaml_rs.loads(  # type: ignore[assignment]  # a mapping file
    Path(__file__).with_name("every_field.yaml").read_text(encoding="utf-8"), parse_datetime=False
)
NAME = st.from_regex(r"[a-z][a-z0-9]{0,5}(-[a-z0-9]{1,4}){0,2}", fullmatch=True)
LABEL_VALUE = st.one_of(st.from_regex(r"[a-z0-9]{1,6}", fullmatch=True), st.integers(0, 99), st.booleans())
LABELS = st.dictionaries(st.from_regex(r"[a-z]{1,5}", fullmatch=True), LABEL_VALUE, max_size=3)
# Maps whose keys are the user's own (labels, resources, components), not fields of the format.
FREE_FORM_KEYS = frozenset(
    {
        "labels",
        "node_selector",
        "match_labels",
        "capacity",
        "allocatable",
        "request",
        "deserved",
        "limit",
        "versions",
        "overcommit",
        "rejected",
    }
)


@dataclass
class Expected:
    """What the model must hold for a drawn document."""

    node_names: list[str] = field(default_factory=list)
    cpu_millis: dict[str, int] = field(default_factory=dict)
    memory_bytes: dict[str, int] = field(default_factory=dict)
    tasks: dict[str, tuple[TaskStatus, str | None, int]] = field(default_factory=dict)  # status, node, cpu
    uses_default_queue: bool = False


def _cpu_text(draw: st.DrawFn, millis: int) -> object:
    """The same cpu amount written one of the ways the format allows."""
    if millis % 1000 == 0:
        return draw(st.sampled_from([millis // 1000, f"{millis}m", str(millis // 1000)]))
    return draw(st.sampled_from([f"{millis}m", millis / 1000]))


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[dict[str, Any], Expected]:
    expected = Expected()
    node_names = draw(st.lists(NAME, max_size=5, unique=True))
    nodes, free = [], {}
    for name in node_names:
        cpu, memory_gi = draw(st.integers(1, 64)) * 1000, draw(st.integers(1, 256))
        nodes.append(
            {
                "name": name,
                "labels": draw(LABELS),
                "capacity": {"cpu": _cpu_text(draw, cpu), "memory": f"{memory_gi}Gi"},
            }
        )
        expected.node_names.append(name)
        expected.cpu_millis[name], expected.memory_bytes[name] = cpu, memory_gi * GI
        free[name] = cpu
    leaves = draw(st.lists(st.sampled_from(["team-a", "team-b", "team-c"]), unique=True, max_size=3))
    queues = [{"name": "org"}] + [{"name": leaf, "parent": "org"} for leaf in leaves] if leaves else []
    jobs = []
    for j in range(draw(st.integers(0, 5))):
        tasks: list[dict[str, Any]] = []
        for t in range(draw(st.integers(1, 3))):
            name, cpu = f"job-{j}-{t}", draw(st.integers(0, 4000))
            status, node = TaskStatus.PENDING, None
            roomy: list[str] = [n for n in node_names if free[n] >= cpu]
            if draw(st.booleans()) and roomy:
                status = draw(st.sampled_from([TaskStatus.RUNNING, TaskStatus.RELEASING]))
                node = draw(st.sampled_from(roomy))
                free[node] -= cpu
            task: dict[str, Any] = {"name": name, "request": {"cpu": f"{cpu}m"}}
            if node is not None:
                task |= {"status": status.value, "node": node}
            tasks.append(task)
            expected.tasks[name] = (status, node, cpu)
        queue = draw(st.sampled_from([None, *leaves]))
        expected.uses_default_queue |= queue is None
        job = {"name": f"job-{j}", "tasks": tasks, "min_available": draw(st.integers(1, len(tasks)))}
        jobs.append(job if queue is None else {**job, "queue": queue})
    document: dict[str, Any] = {"name": draw(NAME), "nodes": nodes, "queues": queues, "jobs": jobs}
    if expected.tasks and node_names and draw(st.booleans()):
        some = draw(st.sampled_from(sorted(expected.tasks)))
        document["expect"] = {"tasks": {some: {"status": "Running", "node": node_names[0]}}}
    return document, expected


def _render(document: dict[str, Any], flow: bool) -> str:
    return json.dumps(document) if flow else yaml_rs.dumps(document)


@settings(max_examples=60)
@given(drawn=scenarios(), flow=st.booleans())
def test_random_valid_scenarios_load_with_what_the_file_says(
    drawn: tuple[dict[str, Any], Expected], flow: bool
) -> None:
    document, expected = drawn
    cluster = parse_scenario(_render(document, flow)).cluster
    assert [node.name for node in cluster.nodes] == expected.node_names
    for node in cluster.nodes:
        assert node.allocatable == node.capacity
        assert node.capacity == {
            "cpu": expected.cpu_millis[node.name],
            "memory": expected.memory_bytes[node.name],
        }
        assert all(isinstance(value, str) for value in node.labels.values())
    loaded = {
        task.name: (task.status, task.node, task.request["cpu"]) for job in cluster.jobs for task in job.tasks
    }
    assert loaded == expected.tasks
    queue_names = [queue.name for queue in cluster.queues]
    assert (DEFAULT_QUEUE in queue_names) == expected.uses_default_queue
    assert len(queue_names) == len(set(queue_names))


def _schema_mapping_paths(value: object, path: str) -> list[tuple[str, dict[str, Any]]]:
    """Every mapping in the document whose keys are fields of the format, with its YAML path."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(value, dict):
        found.append((path, value))
        for key, child in value.items():
            if key not in FREE_FORM_KEYS and not (path == "expect" and key == "tasks"):
                found += _schema_mapping_paths(child, f"{path}.{key}" if path else key)
            elif key == "tasks" and path == "expect":
                found += [(f"expect.tasks.{name}", entry) for name, entry in child.items()]
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _schema_mapping_paths(child, f"{path}[{index}]")
    return found


def _refuses_unknown_key(document: dict[str, Any], path: str, mapping: dict[str, Any]) -> None:
    mapping["zz_not_a_field"] = 1
    try:
        parse_scenario(_render(document, flow=False))
    except ScenarioError as error:
        assert error.path == (f"{path}.zz_not_a_field" if path else "zz_not_a_field")
        assert error.message.startswith("unknown field")
    else:
        raise AssertionError(f"an unknown key at {path or 'the top level'} was accepted")


def test_an_unknown_key_in_any_mapping_of_the_every_field_file_is_refused_at_its_path() -> None:
    paths = [path for path, _ in _schema_mapping_paths(EVERY_FIELD_DOCUMENT, "")]
    deepest = "jobs[0].tasks[0].topology_spread_constraints[0].label_selector.match_expressions[0]"
    assert {"nodes[0].network", "nodes[0].volumes[1]", "jobs[0].tasks[0].image", deepest} <= set(paths)
    for path in paths:
        document = copy.deepcopy(EVERY_FIELD_DOCUMENT)
        mapping = dict(_schema_mapping_paths(document, ""))[path]
        _refuses_unknown_key(document, path, mapping)


@settings(max_examples=60)
@given(drawn=scenarios(), data=st.data())
def test_an_unknown_key_anywhere_is_refused_at_its_path(
    drawn: tuple[dict[str, Any], Expected], data: st.DataObject
) -> None:
    document, _ = drawn
    path, mapping = data.draw(st.sampled_from(_schema_mapping_paths(document, "")))
    _refuses_unknown_key(document, path, mapping)
