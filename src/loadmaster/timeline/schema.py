"""A timeline file (``shared/spec/timeline-format.md``) read and checked into a ``Timeline``.

Everything that can be checked before the run is checked here, with the YAML path of the field
(``timeline[3].do.node_down: ...``): unknown keys and actions, steps out of time order, bad durations,
node fields, and every manifest as the API would validate it. Names that must exist when a step runs
(a node to take down, a replica to fail) are checked by the harness at that moment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from loadmaster.manifests import ManifestError, ManifestErrors, manifest_from_object, normalize_kind
from loadmaster.scenario.errors import FILE_PATH, ScenarioError, did_you_mean
from loadmaster.scenario.fields import (
    as_duration_s,
    as_list,
    as_mapping,
    as_name,
    as_str,
    check_keys,
    require,
)
from loadmaster.scenario.schema import as_kebab_name
from loadmaster.timeline.config import TimelineConfig, as_timeline_config
from loadmaster.timeline.expectations import Expectation, as_expectation
from loadmaster.timeline.node_fields import NodeRegistration, as_registration

_TOP_FIELDS = frozenset({"name", "source", "config", "nodes", "resources", "timeline"})
_STEP_FIELDS = frozenset({"at", "do", "expect"})

# Actions whose rules the control plane does not have yet: refused with the issue that builds them, never
# silently ignored (a timeline that says `rollback` and sees nothing happen would pass for the wrong reason).
NOT_BUILT: dict[str, str] = {
    "rollback": "rollbacks are not built yet",
    "image": "simulated image pulls are not built yet",
    "pressure": "pressure samples and the rebalancer are not built yet",
}
NOT_BUILT_REPLICA_KEYS: dict[str, str] = {
    "health": "health reports and the restart policy are not built yet",
    "exit": "exit reports and the restart policy are not built yet",
    "slow_stop": "slow stops are not built yet",
}
NODE_ACTIONS = ("cordon", "uncordon", "node_down", "agent_down", "node_up", "delete_node", "remove_node")
ACTIONS = (
    "apply", "delete", *NODE_ACTIONS, "add_node", "rollback", "replica", "image", "pressure",
    "leader_failover",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Step:
    at_s: float
    at_text: str  # as the file wrote it, for the output ("200s")
    path: str  # "timeline[3]"
    action: str | None = None  # one of ACTIONS, for a `do` step
    argument: Any = None  # the action's value, checked
    expect: Expectation | None = None


@dataclass(frozen=True, slots=True)
class Timeline:
    name: str
    source: str | None
    config: TimelineConfig
    nodes: tuple[NodeRegistration, ...]
    resources: tuple[dict[str, Any], ...]
    steps: tuple[Step, ...] = field(default=())


def _documents(value: object, path: str) -> tuple[dict[str, Any], ...]:
    """Manifest documents as the API validates them; the first problem names its path under ``path``."""
    documents = []
    for index, raw in enumerate(as_list(value, path)):
        item_path = f"{path}[{index}]"
        try:
            manifest_from_object(raw, item_path)
        except ManifestErrors as errors:
            first = errors.errors[0]
            where = f"{item_path}.{first.path}" if first.path else item_path
            raise ScenarioError(where, first.message) from None
        documents.append(cast(dict[str, Any], raw))
    return tuple(documents)


def _node_name(value: object, path: str) -> str:
    return as_name(value, path)


def _delete(value: object, path: str) -> dict[str, str]:
    mapping = as_mapping(value, path)
    check_keys(mapping, frozenset({"kind", "name"}), path)
    kind = require(mapping, "kind", path)
    try:
        canonical = normalize_kind(kind)
    except ManifestError as error:
        raise ScenarioError(f"{path}.kind", error.message) from None
    return {"kind": canonical, "name": as_name(require(mapping, "name", path), f"{path}.name")}


def _replica(value: object, path: str) -> dict[str, Any]:
    mapping = as_mapping(value, path)
    check_keys(mapping, frozenset({"name", *NOT_BUILT_REPLICA_KEYS}), path)
    name = as_name(require(mapping, "name", path), f"{path}.name")
    for key, why in NOT_BUILT_REPLICA_KEYS.items():
        if key in mapping:
            raise ScenarioError(f"{path}.{key}", f"not supported yet: {why}")
    raise ScenarioError(path, f"say what happens to replica {name}: health, exit or slow_stop")


def _action(value: object, path: str, config: TimelineConfig) -> tuple[str, Any]:
    mapping = as_mapping(value, path)
    if len(mapping) != 1:
        raise ScenarioError(path, f"one action per step, got {len(mapping)} ({', '.join(map(str, mapping))})")
    action, raw = next(iter(mapping.items()))
    where = f"{path}.{action}"
    if action not in ACTIONS:
        raise ScenarioError(
            where, f"unknown action (expected one of {', '.join(ACTIONS)})" + did_you_mean(action, ACTIONS)
        )
    if action in NOT_BUILT:
        raise ScenarioError(where, f"not supported yet: {NOT_BUILT[action]}")
    if action == "apply":
        return action, _documents(raw, where)
    if action == "delete":
        return action, _delete(raw, where)
    if action in NODE_ACTIONS:
        return action, _node_name(raw, where)
    if action == "add_node":
        return action, as_registration(raw, where)
    if action == "replica":
        return action, _replica(raw, where)
    # leader_failover
    if raw not in (None, {}):
        raise ScenarioError(where, "takes no arguments: write leader_failover: {}")
    return action, None


def _at(value: object, path: str) -> tuple[float, str]:
    seconds = as_duration_s(value, path)
    text = value if isinstance(value, str) else f"{value}s"
    return seconds, text.strip()


def _steps(value: object, config: TimelineConfig, node_names: set[str]) -> tuple[Step, ...]:
    steps: list[Step] = []
    previous = 0.0
    for index, raw in enumerate(as_list(value, "timeline")):
        path = f"timeline[{index}]"
        mapping = as_mapping(raw, path)
        check_keys(mapping, _STEP_FIELDS, path)
        at_s, at_text = _at(require(mapping, "at", path), f"{path}.at")
        if at_s < previous:
            raise ScenarioError(
                f"{path}.at", f"steps must be in time order: {at_text} is before the step above"
            )
        previous = at_s
        has_do, has_expect = "do" in mapping, "expect" in mapping
        if has_do == has_expect:
            raise ScenarioError(path, "a step has either do (one action) or expect, not both or neither")
        if has_do:
            action, argument = _action(mapping["do"], f"{path}.do", config)
            steps.append(Step(at_s, at_text, path, action=action, argument=argument))
        else:
            steps.append(
                Step(at_s, at_text, path, expect=as_expectation(mapping["expect"], f"{path}.expect"))
            )
    return tuple(steps)


def build_timeline(document: object) -> Timeline:
    """Validate an already parsed YAML document into a ``Timeline``."""
    if type(document) is not dict:
        raise ScenarioError(FILE_PATH, "the top level must be a mapping (name, nodes, resources, timeline)")
    top: dict[Any, Any] = document
    check_keys(top, _TOP_FIELDS, "")
    name = as_kebab_name(require(top, "name", ""))
    source = None if (raw := top.get("source")) is None else as_str(raw, "source")
    config = TimelineConfig() if (raw := top.get("config")) is None else as_timeline_config(raw, "config")
    nodes: list[NodeRegistration] = []
    for index, raw_node in enumerate(as_list(top.get("nodes") or [], "nodes")):
        node = as_registration(raw_node, f"nodes[{index}]")
        if any(other.name == node.name for other in nodes):
            raise ScenarioError(f"nodes[{index}].name", f'duplicate node name "{node.name}"')
        nodes.append(node)
    resources = _documents(top.get("resources") or [], "resources")
    steps = _steps(require(top, "timeline", ""), config, {n.name for n in nodes})
    return Timeline(name, source, config, tuple(nodes), resources, steps)


def is_timeline(document: object) -> bool:
    """A file is a timeline when its top level has a ``timeline:`` key (otherwise it is a scenario)."""
    return isinstance(document, dict) and "timeline" in document
