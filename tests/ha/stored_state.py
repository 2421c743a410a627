"""What the store holds after a fault, read through one server's API, and the safety checks on it.

* every expected replica exists, once, and nothing else does;
* every one is Scheduled on a node that exists;
* the audit log recorded exactly one binding per replica: the decision was neither lost nor repeated
  (the binding and its audit entry are written in one transaction, so the log is the decision history);
* no node holds more than it can: the requests of its replicas fit its allocatable resources.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import httpx

from loadmaster.core.resources import parse_resources
from tests.ha.servers import ServerGroup

PLACED = "Scheduled"


@dataclass
class StoredState:
    replicas: dict[str, dict[str, Any]]
    nodes: dict[str, dict[str, Any]]
    workloads: set[str]  # the names of the stored Jobs and Deployments
    bindings: Counter[str]  # replica -> how many times the audit log says it was bound
    terms: list[dict[str, Any]]  # the audit log's leadership entries, in order


def read_state(group: ServerGroup) -> StoredState:
    server = group.wait_for_leader(timeout_s=10)[0]
    with server.client(group.token) as client:

        def items(kind: str) -> list[dict[str, Any]]:
            return list(client.get(f"/api/{kind}").raise_for_status().json()["items"])

        audit = client.get("/api/audit", params={"type": "schedule,leadership"}).raise_for_status()
        entries = audit.json()["items"]
        replicas = {item["metadata"]["name"]: item for item in items("replicas")}
        nodes = {item["metadata"]["name"]: item for item in items("nodes")}
        workloads = {item["metadata"]["name"] for kind in ("jobs", "deployments") for item in items(kind)}
    bindings: Counter[str] = Counter()
    for entry in entries:
        if entry["type"] == "schedule":
            bindings.update(entry["details"]["bindings"].keys())
    terms = [entry for entry in entries if entry["type"] == "leadership"]
    return StoredState(replicas, nodes, workloads, bindings, terms)


def placement_problems(state: StoredState, expected: set[str]) -> list[str]:
    """Everything wrong with how ``expected`` replicas were placed (empty: all is well)."""
    problems = []
    if missing := expected - state.replicas.keys():
        problems.append(f"replicas missing: {sorted(missing)}")
    if extra := state.replicas.keys() - expected:
        problems.append(f"replicas nobody asked for: {sorted(extra)}")
    for name in sorted(expected & state.replicas.keys()):
        status = state.replicas[name].get("status", {})
        if status.get("phase") != PLACED:
            problems.append(f"{name} is {status.get('phase', 'Pending')}, not {PLACED}")
        elif status.get("node_ref") not in state.nodes:
            problems.append(f"{name} is on unknown node {status.get('node_ref')!r}")
        if state.bindings[name] != 1:
            problems.append(f"{name} was bound {state.bindings[name]} times according to the audit log")
    return problems + overcommit_problems(state)


def overcommit_problems(state: StoredState) -> list[str]:
    used: dict[str, Counter[str]] = defaultdict(Counter)
    for replica in state.replicas.values():
        node = replica.get("status", {}).get("node_ref")
        if node is not None:
            used[node].update(parse_resources(replica["spec"]["resources"]))
    problems = []
    for node, amounts in sorted(used.items()):
        spec = state.nodes[node]["spec"] if node in state.nodes else {}
        allocatable = Counter(parse_resources(spec.get("capacity", {})))
        allocatable.subtract(parse_resources(spec.get("system_reserved", {})))
        for resource, amount in sorted(amounts.items()):
            if amount > allocatable[resource]:
                problems.append(f"{node} over-committed on {resource}: {amount} > {allocatable[resource]}")
    return problems


def scheduled_count(group: ServerGroup) -> int:
    """Replicas Scheduled according to the leader's cache (0 while nobody leads)."""
    for server in group.answering():
        with server.client(group.token, timeout_s=2.0) as client:
            try:
                stats = client.get("/api/admin/stats").raise_for_status().json()
            except httpx.HTTPError:  # a server going away mid-poll: ask the next one
                continue
        return int(stats["replicas_by_phase"].get(PLACED, 0))
    return 0


def wait_all_scheduled(group: ServerGroup, count: int, timeout_s: float) -> float:
    """Poll until ``count`` replicas are Scheduled; the seconds it took."""
    started = time.monotonic()
    while (seen := scheduled_count(group)) < count:
        if time.monotonic() - started > timeout_s:
            raise AssertionError(
                f"{seen} of {count} replicas Scheduled after {timeout_s:g}s\n"
                f"{group.statuses()}\n{group.logs()}"
            )
        time.sleep(0.05)
    return time.monotonic() - started
