"""Scenario files: YAML text -> a validated ``Scenario`` (a frozen ``Cluster`` plus expectations).

The format is ``shared/spec/scenario-format.md``. Every key at every level is checked, and every
refusal is a ``ScenarioError`` whose ``path`` is the YAML path of the offending field, in the spec's
style: ``jobs[2].tasks[0].request.memory: bad quantity "2 GB"``. ``<file>`` is the path of problems
with the file as a whole (unreadable, not YAML, top level not a mapping).

Parsing uses ``yaml_rs`` (YAML 1.2: ``yes``/``on`` are strings, ``0o17`` is octal), with timestamps
left as text. Validation is plain Python, one pass per list, with no per-field framework: a file of
5,000 nodes and 10,000 jobs validates in a fraction of its parse time (``bench/scenario_load.py``).

Extensions beyond the spec, accepted here:
- a task's ``required_node_affinity: [{key, operator, values}]``, operators In, NotIn, Exists,
  DoesNotExist, Gt, Lt, all of which must hold;
- ``match_expressions`` in ``preferred_node_affinity`` terms, besides ``match_labels``;
- ``config.max_consolidation_moves``, an integer >= 0;
- ``config.backfill_depth``, an integer >= 0 (default: no bound; ``actions/backfill_depth.py``);
- node ``overcommit``, job ``overcommit``, node ``gpu_driver``/``gpu_capabilities`` and task ``gpus``
  (``docs/fields.md``);
- in ``expect``, a task's ``devices`` (the GPU devices it must hold) and ``rejected`` (its explanation's
  summary: nodes turned away per category, e.g. ``{gpu: 2}``).

Choices where the spec is silent (see also the sibling modules' docstrings):
- YAML numbers and booleans in label values become their YAML text: ``true`` -> "true", ``3`` -> "3";
- ``null`` for an optional field means absent (its default);
- ``previous_node`` and ``hosts`` may name nodes not in the file (they then match nothing);
- an ``expect`` entry with status Pending cannot name a node.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, cast

import yaml_rs

from loadmaster.core.model import Cluster, SchedulerConfig, TaskStatus
from loadmaster.core.resources import GPU
from loadmaster.fields.duplicate_keys import DUPLICATE_KEY_ERROR, find_duplicate_key
from loadmaster.scenario.bindings import check_not_over_committed
from loadmaster.scenario.config import as_config
from loadmaster.scenario.errors import FILE_PATH, ScenarioError, did_you_mean
from loadmaster.scenario.fields import (
    as_choice,
    as_int,
    as_mapping,
    as_name,
    as_str,
    as_tuple,
    check_keys,
    require,
    type_name,
)
from loadmaster.scenario.jobs import JobContext, as_jobs
from loadmaster.scenario.nodes import as_nodes
from loadmaster.scenario.queues import as_queues, with_implicit_default

__all__ = ["ExpectedTask", "Scenario", "ScenarioError", "build_scenario", "load_scenario", "parse_scenario"]

_KEBAB_CASE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_YAML_POSITION = re.compile(r"line (\d+), column (\d+)")
_TOP_FIELDS = frozenset({"name", "source", "config", "nodes", "queues", "jobs", "expect"})
_EXPECT_FIELDS = frozenset({"tasks"})
_EXPECTED_TASK_FIELDS = frozenset({"status", "node", "devices", "rejected"})
EXPECTED_STATUSES: tuple[str, ...] = ("Running", "Pipelined", "Pending", "Evicted", "Moved")


@dataclass(frozen=True, slots=True)
class ExpectedTask:
    status: TaskStatus
    node: str | None  # None = any node
    devices: tuple[int, ...] | None = None  # None = not checked
    rejected: dict[str, int] | None = None  # the explanation's summary; None = not checked


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    source: str | None
    cluster: Cluster
    expect: dict[str, ExpectedTask] | None  # None: the file has no expect block


def _expected_task(value: object, path: str, node_names: set[str]) -> ExpectedTask:
    mapping = as_mapping(value, path)
    check_keys(mapping, _EXPECTED_TASK_FIELDS, path)
    status = TaskStatus(as_choice(require(mapping, "status", path), f"{path}.status", EXPECTED_STATUSES))
    raw = mapping.get("devices")
    devices = (
        None if raw is None else as_tuple(raw, f"{path}.devices", lambda v, at: as_int(v, at, minimum=0))
    )
    raw = mapping.get("rejected")
    rejected = None
    if raw is not None:
        rejected = {
            as_name(key, f"{path}.rejected"): as_int(count, f"{path}.rejected.{key}", minimum=1)
            for key, count in as_mapping(raw, f"{path}.rejected").items()
        }
    raw_node = mapping.get("node")
    if raw_node is None:
        return ExpectedTask(status, None, devices, rejected)
    node = as_name(raw_node, f"{path}.node")
    if status is TaskStatus.PENDING:
        raise ScenarioError(f"{path}.node", "a task expected Pending is on no node")
    if node not in node_names:
        raise ScenarioError(f"{path}.node", f'unknown node "{node}"' + did_you_mean(node, node_names))
    return ExpectedTask(status, node, devices, rejected)


def _expect(value: object, task_paths: dict[str, str], node_names: set[str]) -> dict[str, ExpectedTask]:
    mapping = as_mapping(value, "expect")
    check_keys(mapping, _EXPECT_FIELDS, "expect")
    tasks = mapping.get("tasks")
    expected: dict[str, ExpectedTask] = {}
    for name, entry in ({} if tasks is None else as_mapping(tasks, "expect.tasks")).items():
        path = f"expect.tasks.{name}"
        if type(name) is not str:
            raise ScenarioError("expect.tasks", f"task names must be strings, got {type_name(name)} {name!r}")
        if name not in task_paths:
            raise ScenarioError(path, f'unknown task "{name}"' + did_you_mean(name, task_paths))
        expected[name] = _expected_task(entry, path, node_names)
    return expected


def as_kebab_name(value: object) -> str:
    """The file's `name`: kebab-case, as both file formats require."""
    name = as_str(value, "name")
    if not _KEBAB_CASE.match(name):
        raise ScenarioError(
            "name", f'must be kebab-case (lowercase letters and digits joined by "-"), got "{name}"'
        )
    return name


def build_scenario(document: object) -> Scenario:
    """Validate an already parsed YAML document (plain dicts and lists) into a ``Scenario``."""
    if type(document) is not dict:
        raise ScenarioError(
            FILE_PATH, f"the top level must be a mapping (name, nodes, jobs, ...), got {type_name(document)}"
        )
    top: dict[Any, Any] = document
    check_keys(top, _TOP_FIELDS, "")
    name = as_kebab_name(require(top, "name", ""))
    source = None if (raw := top.get("source")) is None else as_str(raw, "source")
    config = SchedulerConfig() if (raw := top.get("config")) is None else as_config(raw, "config")
    nodes = () if (raw := top.get("nodes")) is None else as_nodes(raw, "nodes", config.license_tiers)
    queues = () if (raw := top.get("queues")) is None else as_queues(raw, "queues")
    node_names = {node.name for node in nodes}
    node_gpus = {node.name: node.allocatable.get(GPU, 0) for node in nodes}
    context = JobContext(node_names, node_gpus, license_tiers=config.license_tiers, queues=queues)
    jobs = () if (raw := top.get("jobs")) is None else as_jobs(raw, "jobs", context)
    check_not_over_committed(nodes, jobs, "nodes")
    queues = with_implicit_default(queues, {job.queue for job in jobs})
    expect = None if (raw := top.get("expect")) is None else _expect(raw, context.task_paths, node_names)
    cluster = Cluster(nodes=nodes, jobs=jobs, queues=queues, config=config)
    return Scenario(name=name, source=source, cluster=cluster, expect=expect)


def _yaml_error(exc: yaml_rs.YAMLDecodeError) -> ScenarioError:
    """yaml_rs reports "YAML parse error at line L, column C", a source excerpt, then the reason."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    position = _YAML_POSITION.search(lines[0]) if lines else None
    if position is None:
        return ScenarioError(FILE_PATH, "not valid YAML: " + " ".join(str(exc).split()))
    line, column = position.groups()
    return ScenarioError(FILE_PATH, f"not valid YAML at line {line}, column {column}: {lines[-1].strip()}")


def parse_yaml_document(text: str) -> object:
    """One YAML document as plain dicts and lists; malformed YAML is a ``<file>`` error with its line."""
    try:
        return cast(object, yaml_rs.loads(text, parse_datetime=False))
    except yaml_rs.YAMLDecodeError as exc:
        duplicate = find_duplicate_key(text) if DUPLICATE_KEY_ERROR in str(exc) else None
        if duplicate is not None:
            raise ScenarioError(duplicate.path, duplicate.message()) from exc
        raise _yaml_error(exc) from exc


def parse_scenario(text: str) -> Scenario:
    """Parse and validate scenario YAML text; bad input raises ``ScenarioError`` naming its path."""
    return build_scenario(parse_yaml_document(text))


def load_document(path: str | os.PathLike[str]) -> object:
    """Read a YAML file (UTF-8) into plain dicts and lists; an unreadable file is a ``<file>`` error too.
    Scenario and timeline files both start here (a timeline is the file with a ``timeline:`` key)."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as exc:
        raise ScenarioError(FILE_PATH, f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ScenarioError(FILE_PATH, f"{os.fspath(path)} is not UTF-8 text: {exc.reason}") from exc
    return parse_yaml_document(text)


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Read a scenario file (UTF-8) and validate it."""
    return build_scenario(load_document(path))
