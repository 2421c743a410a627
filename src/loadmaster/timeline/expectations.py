"""A timeline's ``expect``: read from the file, then judged against what the harness observed.

Every field listed must hold; what is not listed is not checked. ``events`` is an ordered subset match:
the listed events must appear among the events since the previous ``expect``, in that order (others may
come between them), each matching on the fields it lists. A mismatch is one line naming the field,
what was expected and what was seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loadmaster.scenario.errors import ScenarioError
from loadmaster.scenario.fields import as_int, as_list, as_mapping, as_name, as_str, check_keys

_TOP = frozenset({"replicas", "services", "deployments", "nodes", "absent", "events", "no_events"})
_REPLICA = frozenset({"phase", "node", "image", "restart_count", "reason", "previous_node"})
_SERVICE = frozenset({"running", "nodes", "images"})
_DEPLOYMENT = frozenset({"rollout", "pending_reason"})
_ROLLOUT = frozenset(
    {"state", "failure_reason", "total_steps", "current_step", "revision", "from_revision", "step_replica"}
)
_NODE = frozenset({"state", "reason"})
_ABSENT = frozenset({"replicas", "nodes"})


@dataclass(frozen=True, slots=True)
class Expectation:
    replicas: dict[str, dict[str, Any]]
    services: dict[str, dict[str, Any]]
    deployments: dict[str, dict[str, Any]]
    nodes: dict[str, dict[str, Any]]
    absent_replicas: tuple[str, ...]
    absent_nodes: tuple[str, ...]
    events: tuple[dict[str, Any], ...]
    no_events: tuple[str, ...]


def _fields(value: object, path: str, allowed: frozenset[str]) -> dict[str, Any]:
    mapping = as_mapping(value, path)
    check_keys(mapping, allowed, path)
    return {str(k): v for k, v in mapping.items()}


def _by_name(value: object, path: str, allowed: frozenset[str]) -> dict[str, dict[str, Any]]:
    return {
        str(name): _fields(fields, f"{path}.{name}", allowed)
        for name, fields in as_mapping(value, path).items()
    }


def _counts(value: object, path: str) -> dict[str, int]:
    return {str(k): as_int(v, f"{path}.{k}", minimum=0) for k, v in as_mapping(value, path).items()}


def _service(value: object, path: str) -> dict[str, Any]:
    fields = _fields(value, path, _SERVICE)
    if "running" in fields:
        fields["running"] = as_int(fields["running"], f"{path}.running", minimum=0)
    for key in ("nodes", "images"):
        if key in fields:
            fields[key] = _counts(fields[key], f"{path}.{key}")
    return fields


def _deployment(value: object, path: str) -> dict[str, Any]:
    fields = _fields(value, path, _DEPLOYMENT)
    if fields.get("rollout") is not None:
        fields["rollout"] = _fields(fields["rollout"], f"{path}.rollout", _ROLLOUT)
    return fields


def _events(value: object, path: str) -> tuple[dict[str, Any], ...]:
    events = []
    for index, raw in enumerate(as_list(value, path)):
        event = {str(k): v for k, v in as_mapping(raw, f"{path}[{index}]").items()}
        if "type" not in event:
            raise ScenarioError(f"{path}[{index}]", "an expected event names its type")
        events.append(event)
    return tuple(events)


def _names(value: object, path: str) -> tuple[str, ...]:
    return tuple(as_name(item, f"{path}[{i}]") for i, item in enumerate(as_list(value, path)))


def as_expectation(value: object, path: str) -> Expectation:
    top = _fields(value, path, _TOP)
    absent = _fields(top.get("absent") or {}, f"{path}.absent", _ABSENT)
    return Expectation(
        replicas=_by_name(top.get("replicas") or {}, f"{path}.replicas", _REPLICA),
        services={
            str(k): _service(v, f"{path}.services.{k}")
            for k, v in as_mapping(top.get("services") or {}, f"{path}.services").items()
        },
        deployments={
            str(k): _deployment(v, f"{path}.deployments.{k}")
            for k, v in as_mapping(top.get("deployments") or {}, f"{path}.deployments").items()
        },
        nodes=_by_name(top.get("nodes") or {}, f"{path}.nodes", _NODE),
        absent_replicas=_names(absent.get("replicas") or [], f"{path}.absent.replicas"),
        absent_nodes=_names(absent.get("nodes") or [], f"{path}.absent.nodes"),
        events=_events(top.get("events") or [], f"{path}.events"),
        no_events=tuple(
            as_str(t, f"{path}.no_events[{i}]")
            for i, t in enumerate(as_list(top.get("no_events") or [], f"{path}.no_events"))
        ),
    )


# -- judging ---------------------------------------------------------------------------------------------


def _same(expected: object, seen: object) -> bool:
    """Equal, with numbers compared as numbers (an expected 3 matches 3.0)."""
    if isinstance(expected, bool) or isinstance(seen, bool):
        return expected == seen
    if isinstance(expected, int | float) and isinstance(seen, int | float):
        return float(expected) == float(seen)
    return expected == seen


def _compare(expected: Mapping[str, Any], seen: Mapping[str, Any] | None, path: str, out: list[str]) -> None:
    for key, want in expected.items():
        got = None if seen is None else seen.get(key)
        if isinstance(want, Mapping) and (got is None or isinstance(got, Mapping)):
            if got is None:
                out.append(f"{path}.{key}: expected {_show(want)}, got null")
            else:
                _compare(want, got, f"{path}.{key}", out)
        elif not _same(want, got):
            out.append(f"{path}.{key}: expected {_show(want)}, got {_show(got)}")


def _show(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    return repr(value)


def _service_view(owner: str, replicas: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    running = [r for r in replicas.values() if r.get("owner") == owner and r.get("phase") == "Running"]
    nodes: dict[str, int] = {}
    images: dict[str, int] = {}
    for replica in running:
        nodes[str(replica.get("node"))] = nodes.get(str(replica.get("node")), 0) + 1
        images[str(replica.get("image"))] = images.get(str(replica.get("image")), 0) + 1
    return {"running": len(running), "nodes": nodes, "images": images}


def _counts_match(want: Mapping[str, int], got: Mapping[str, int], path: str, out: list[str]) -> None:
    for key, count in want.items():
        if got.get(key, 0) != count:
            out.append(f"{path}.{key}: expected {count}, got {got.get(key, 0)}")


def _event_matches(expected: Mapping[str, Any], event: Mapping[str, Any]) -> bool:
    return all(_same(value, event.get(key)) for key, value in expected.items())


def _compare_each(
    kind: str,
    expected: Mapping[str, Mapping[str, Any]],
    seen: Mapping[str, Mapping[str, Any]],
    ended: tuple[str, str] | None,
    out: list[str],
) -> None:
    """Each expected object of ``kind`` against the one seen by that name; an ended one (``ended``: the
    field and value that say so) counts as none."""
    for name, fields in expected.items():
        found = seen.get(name)
        if found is None or (ended is not None and found.get(ended[0]) == ended[1]):
            out.append(f"{kind}.{name}: expected {kind[:-1]}, got none")
            continue
        _compare(fields, found, f"{kind}.{name}", out)


def judge(
    expectation: Expectation, observed: Mapping[str, Any], events: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Every mismatch between ``expectation`` and ``observed`` (the output's ``observed`` object)."""
    out: list[str] = []
    replicas: Mapping[str, Mapping[str, Any]] = observed["replicas"]
    _compare_each("replicas", expectation.replicas, replicas, ("phase", "Terminated"), out)
    for owner, fields in expectation.services.items():
        view = _service_view(owner, replicas)
        if "running" in fields and fields["running"] != view["running"]:
            out.append(f"services.{owner}.running: expected {fields['running']}, got {view['running']}")
        for key in ("nodes", "images"):
            if key in fields:
                _counts_match(fields[key], view[key], f"services.{owner}.{key}", out)
    _compare_each("deployments", expectation.deployments, observed["deployments"], None, out)
    nodes: Mapping[str, Mapping[str, Any]] = observed["nodes"]
    _compare_each("nodes", expectation.nodes, nodes, ("state", "Removed"), out)
    for name in expectation.absent_replicas:
        if name in replicas and replicas[name].get("phase") != "Terminated":
            out.append(f"absent.replicas: {name} exists ({replicas[name].get('phase')})")
    for name in expectation.absent_nodes:
        if name in nodes and nodes[name].get("state") != "Removed":
            out.append(f"absent.nodes: {name} exists ({nodes[name].get('state')})")
    position = 0
    for index, wanted in enumerate(expectation.events):
        while position < len(events) and not _event_matches(wanted, events[position]):
            position += 1
        if position == len(events):
            out.append(f"events[{index}]: expected {_show(dict(wanted))} (in this order), not seen")
            break
        position += 1
    for kind in expectation.no_events:
        seen = [e for e in events if e.get("type") == kind]
        if seen:
            out.append(f"no_events: {len(seen)} {kind} event(s), the first at {seen[0].get('at')}")
    return out
