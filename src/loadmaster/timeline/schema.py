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
    as_bool,
    as_choice,
    as_duration_s,
    as_int,
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

REPLICA_KEYS = ("health", "exit", "slow_stop")
IMAGE_KEYS = ("pull", "start_delay")
NODE_ACTIONS = ("cordon", "uncordon", "node_down", "agent_down", "node_up", "delete_node", "remove_node")
ACTIONS = (
    "apply", "delete", *NODE_ACTIONS, "add_node", "rollback", "replica", "image", "pressure",
    "leader_failover", "address_pool",
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
    """``{name, health: failing|passing}``, ``{name, exit: CODE}`` or ``{name, slow_stop: BOOL}``."""
    mapping = as_mapping(value, path)
    check_keys(mapping, frozenset({"name", *REPLICA_KEYS}), path)
    name = as_name(require(mapping, "name", path), f"{path}.name")
    given = [key for key in REPLICA_KEYS if key in mapping]
    if len(given) != 1:
        raise ScenarioError(path, f"say one thing that happens to replica {name}: health, exit or slow_stop")
    key = given[0]
    where = f"{path}.{key}"
    if key == "health":
        return {"name": name, "health": as_choice(mapping[key], where, ("failing", "passing"))}
    if key == "exit":
        return {"name": name, "exit": as_int(mapping[key], where, minimum=-255, maximum=255)}
    return {"name": name, "slow_stop": as_bool(mapping[key], where)}


def _image(value: object, path: str) -> dict[str, Any]:
    """``{name, pull: fails|succeeds}`` and/or ``{name, start_delay: DURATION}``."""
    mapping = as_mapping(value, path)
    check_keys(mapping, frozenset({"name", *IMAGE_KEYS}), path)
    name = as_str(require(mapping, "name", path), f"{path}.name")
    if not any(key in mapping for key in IMAGE_KEYS):
        raise ScenarioError(path, f"say what happens to image {name}: pull or start_delay")
    image: dict[str, Any] = {"name": name, "pull_fails": None, "start_delay_s": None}
    if "pull" in mapping:
        image["pull_fails"] = as_choice(mapping["pull"], f"{path}.pull", ("fails", "succeeds")) == "fails"
    if "start_delay" in mapping:
        image["start_delay_s"] = as_duration_s(mapping["start_delay"], f"{path}.start_delay")
    return image


@dataclass(frozen=True, slots=True)
class PressureStep:
    node: str
    cpu: float
    memory: float


def _pressure(value: object, path: str) -> PressureStep:
    """``{node, cpu, memory}``: the node's measured utilisation from now on, 0..1 each."""
    mapping = as_mapping(value, path)
    check_keys(mapping, frozenset({"node", "cpu", "memory"}), path)
    node = as_name(require(mapping, "node", path), f"{path}.node")
    shares = []
    for key in ("cpu", "memory"):
        share = require(mapping, key, path)
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
            raise ScenarioError(f"{path}.{key}", f"expected a utilisation from 0 to 1, got {share!r}")
        shares.append(float(share))
    return PressureStep(node, shares[0], shares[1])


@dataclass(frozen=True, slots=True)
class AddressPoolStep:
    node: str
    size: int


def _address_pool(value: object, path: str) -> AddressPoolStep:
    """``{node, size}``: the node's agent registers again with an address pool of ``size`` addresses (an
    agent restarted with another ``--address-pool``; docs/addresses.md)."""
    mapping = as_mapping(value, path)
    check_keys(mapping, frozenset({"node", "size"}), path)
    node = as_name(require(mapping, "node", path), f"{path}.node")
    size = as_int(require(mapping, "size", path), f"{path}.size", minimum=0)
    return AddressPoolStep(node, size)


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
    if action == "image":
        return action, _image(raw, where)
    if action == "rollback":
        return action, as_name(raw, where)
    if action == "pressure":
        return action, _pressure(raw, where)
    if action == "address_pool":
        return action, _address_pool(raw, where)
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
