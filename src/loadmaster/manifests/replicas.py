"""Replica identity and lifecycle: names, the never-reused index counter, phases and spec_hash.

Names are sortable and grep-friendly (JACO D1, D2): ``<deployment>-<service>-<index>`` where the
index comes from a per-service counter that never hands out an index twice (so a replaced replica
never shares a name, and therefore a store key or a log line, with its predecessor);
``<deployment>-<service>-<host>`` for ``global`` services, so a surviving node's replica keeps its
name through membership churn; ``<job>-<index>`` for the tasks of a Job.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import msgspec


class ReplicaPhase(StrEnum):
    PENDING = "Pending"  # stored, waiting for a node
    SCHEDULED = "Scheduled"  # the scheduler wrote node_ref; the agent has not started it yet
    RUNNING = "Running"  # the agent reports every container up
    FAILED = "Failed"  # could not start or keep running; never rescheduled automatically (A7)
    TERMINATING = "Terminating"  # deletion requested; the agent is stopping it
    TERMINATED = "Terminated"  # the agent removed everything; the record goes soon after
    SUCCEEDED = "Succeeded"  # a job's task finished with success


# Who moves a replica between phases (seed section A): the scheduler binds (Pending -> Scheduled), the
# agent starts, fails, finishes and removes, the API server marks deletions, and node loss returns
# Scheduled/Running replicas to Pending (G1). Failed only goes forward: it is never retried by itself.
ALLOWED_TRANSITIONS: Mapping[ReplicaPhase, frozenset[ReplicaPhase]] = {
    ReplicaPhase.PENDING: frozenset({ReplicaPhase.SCHEDULED, ReplicaPhase.TERMINATING}),
    ReplicaPhase.SCHEDULED: frozenset(
        {ReplicaPhase.RUNNING, ReplicaPhase.FAILED, ReplicaPhase.PENDING, ReplicaPhase.TERMINATING}
    ),
    ReplicaPhase.RUNNING: frozenset(
        {ReplicaPhase.FAILED, ReplicaPhase.SUCCEEDED, ReplicaPhase.PENDING, ReplicaPhase.TERMINATING}
    ),
    ReplicaPhase.FAILED: frozenset({ReplicaPhase.TERMINATING}),
    ReplicaPhase.SUCCEEDED: frozenset({ReplicaPhase.TERMINATING}),
    ReplicaPhase.TERMINATING: frozenset({ReplicaPhase.TERMINATED}),
    ReplicaPhase.TERMINATED: frozenset(),
}

# Phases in which a replica neither holds nor wants resources.
FINISHED_PHASES = frozenset({ReplicaPhase.FAILED, ReplicaPhase.SUCCEEDED, ReplicaPhase.TERMINATED})


def can_transition(current: ReplicaPhase | str, target: ReplicaPhase | str) -> bool:
    return ReplicaPhase(target) in ALLOWED_TRANSITIONS[ReplicaPhase(current)]


def _index_text(index: int) -> str:
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError(f"replica index must be a non-negative integer, got {index!r}")
    return str(index)


def replica_name(deployment: str, service: str, index: int) -> str:
    """``replica_name("shop", "api", 3)`` -> ``"shop-api-3"``."""
    return f"{deployment}-{service}-{_index_text(index)}"


def global_replica_name(deployment: str, service: str, host: str) -> str:
    """``global_replica_name("shop", "logs", "worker-01")`` -> ``"shop-logs-worker-01"``."""
    return f"{deployment}-{service}-{host}"


# A replacement of replica X (make-before-break: drain, rollout, moves) is stored as ``X.next`` while
# both exist; when it runs, it takes the key X (shared/spec/timeline-format.md, "Names").
REPLACEMENT_SUFFIX = ".next"


def replacement_name(name: str) -> str:
    """``replacement_name("shop-api-3")`` -> ``"shop-api-3.next"``."""
    return f"{name}{REPLACEMENT_SUFFIX}"


def new_incarnation(name: str, revision: int) -> str:
    """``<name>@<revision>``: ``revision`` is the store revision the creating pass had seen. Unique per
    name, since a name is created again only after its record was deleted, at a later revision."""
    return f"{name}@{revision}"


def incarnation_of(replica: Mapping[str, Any]) -> str:
    """The incarnation a stored replica carries; a record from before incarnations existed is its own
    name's only incarnation."""
    spec = replica.get("spec") or {}
    incarnation = spec.get("incarnation")
    if isinstance(incarnation, str) and incarnation:
        return incarnation
    return str((replica.get("metadata") or {}).get("name", ""))


def job_task_name(job: str, index: int) -> str:
    """``job_task_name("train-llm", 0)`` -> ``"train-llm-0"``."""
    return f"{job}-{_index_text(index)}"


@dataclass(frozen=True, slots=True)
class ReplicaCounter:
    """A per-service monotonic counter (JACO's ReplicaCounter): indices are handed out once, ever."""

    next_index: int = 0

    def take(self, count: int) -> tuple[tuple[int, ...], ReplicaCounter]:
        """The next ``count`` indices and the counter to store afterwards."""
        if count < 0:
            raise ValueError(f"cannot take a negative number of indices ({count})")
        taken = tuple(range(self.next_index, self.next_index + count))
        return taken, ReplicaCounter(self.next_index + count)


# The replica count is not part of what a replica runs: scaling 3 -> 4 must not re-create the three
# running replicas (a replicas-only change is a scale, not a roll; seed conflict #10).
_NOT_HASHED = frozenset({"replicas"})


# msgspec writes JSON several times faster than the stdlib, and byte for byte the same for the values a
# normalized spec holds except floats: it writes 1e16 and 0.00001 where json.dumps writes 1e+16 and
# 1e-05, and NaN or Infinity as null where json.dumps refuses them. Non-string keys and types JSON lacks
# (datetime, bytes, sets ...) are refused by one and written by the other. So the fast path takes only
# exact dicts with string keys, lists, strings, ints, booleans and None; anything else, floats
# included, goes through json.dumps, whose text every stored spec_hash was computed from.
_SORTED_JSON = msgspec.json.Encoder(order="sorted")
_SAME_IN_BOTH = frozenset({str, int, bool, type(None)})


def _written_alike(value: Any) -> bool:
    """Whether msgspec and json.dumps give the same text for ``value`` (see _SAME_IN_BOTH)."""
    # Plain loops: ``all()`` over a generator takes half as long again, and this runs on every hash.
    kind = type(value)
    if kind is dict:
        for key, item in value.items():  # noqa: SIM110
            if type(key) is not str or not _written_alike(item):
                return False
        return True
    if kind is list:
        for item in value:  # noqa: SIM110
            if not _written_alike(item):
                return False
        return True
    return kind in _SAME_IN_BOTH


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8: the same data always gives the same bytes.

    Exactly ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    allow_nan=False).encode("utf-8")``, including its errors (NaN/Infinity, lone surrogates).
    """
    if _written_alike(value):
        return _SORTED_JSON.encode(value)
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8")


def spec_hash(service_spec: Mapping[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of a service's (or job task's) normalized spec (JACO D3).

    ``sha256(json(spec without replicas, sort_keys, separators=(",", ":")))``. Comments and YAML
    formatting are gone once parsed, so they cannot change it; any value that reaches the replica
    (image, command, env, healthcheck, resources, placement ...) does.
    """
    hashed = {key: value for key, value in service_spec.items() if key not in _NOT_HASHED}
    return hashlib.sha256(canonical_json(hashed)).hexdigest()
