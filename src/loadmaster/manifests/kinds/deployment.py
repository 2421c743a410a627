"""Deployment: long-running services, each a set of replicas placed by one of four modes (JACO).

Placement modes: ``spread`` (default; replicas over the eligible nodes by a stable hash), ``pack``
(least-loaded node first), ``hosts`` (only the listed nodes, at most one replica each) and ``global``
(one replica per ready node, so ``replicas`` is meaningless there and refused).
"""

from __future__ import annotations

from typing import Any

from loadmaster.manifests.errors import Problems
from loadmaster.manifests.kinds.status_fields import free_form_status
from loadmaster.manifests.quantity_fields import duration
from loadmaster.manifests.task_fields import TASK_FIELDS, apply_ranking_defaults, check_task
from loadmaster.manifests.timeslots import timeslot
from loadmaster.manifests.validation import (
    Reader,
    at,
    boolean,
    dns_name,
    integer,
    list_of,
    object_of,
    one_of,
    read_object,
    string_list,
    text,
    unique_dns_names,
)

PLACEMENTS = ("spread", "pack", "hosts", "global")
# What happens to a replica when its node is lost (controllers/nodes/node_loss.py); unset: the cluster's
# default.
NODE_LOSS_POLICIES = ("single_replica", "all", "none")
DEFAULT_PLACEMENT = "spread"
DEFAULT_REPLICAS = 1
# Services stay where they are unless they say `preemptible: true` (AVA: instances are not moved at will).
SERVICE_PREEMPTIBLE_DEFAULT = False

_healthcheck_fields = object_of(
    {
        "command": string_list,
        "http": text,  # a URL answered with 2xx/3xx
        "tcp": integer(1, 65535),  # a port on 127.0.0.1 that accepts connections
        "interval": duration,
        "timeout": duration,
        "retries": integer(1),
        "start_period": duration,
    },
)
HEALTHCHECK_PROBES = ("command", "http", "tcp")


def healthcheck(problems: Problems, path: str, value: object) -> dict[str, Any]:
    """Exactly one probe (command, http or tcp) and its timing."""
    read: dict[str, Any] = _healthcheck_fields(problems, path, value)
    given = [probe for probe in HEALTHCHECK_PROBES if isinstance(value, dict) and probe in value]
    if isinstance(value, dict) and len(given) != 1:
        found = ", ".join(given) or "none"
        problems.add(path, f"expected exactly one of command, http or tcp, got {found}")
    return read


# How the service's replicas are rolled to a new spec (issue 15): a step not done within step_timeout
# aborts the rollout (the server's rollout_step_timeout, 60 s, when absent).
rollout_settings = object_of({"step_timeout": duration})

# Fields only a service has, on top of the shared task fields.
SERVICE_ONLY_FIELDS: dict[str, Reader] = {
    "replicas": integer(0),
    "placement": one_of(*PLACEMENTS),
    "hosts": unique_dns_names,
    "healthcheck": healthcheck,
    "node_loss_policy": one_of(*NODE_LOSS_POLICIES),
    # Restarts after a failed health check or an exit before the replica is Failed (restart_exhausted);
    # the server's restart_budget (3) when absent.
    "restart_budget": integer(0),
    "rollout": rollout_settings,
    # One address of its node's address pool per replica (docs/addresses.md): requests ``addresses: 1``.
    "address": boolean,
}
SERVICE_FIELDS: dict[str, Reader] = {"name": dns_name, **TASK_FIELDS, **SERVICE_ONLY_FIELDS}


def read_service(problems: Problems, path: str, value: object) -> dict[str, Any]:
    read = read_object(problems, path, value, SERVICE_FIELDS, required=("name",))
    check_task(problems, path, read, value)
    if isinstance(value, dict):
        check_placement(problems, path, read, value)
        if read.get("address") and "addresses" in (value.get("resources") or {}):
            problems.add(at(at(path, "resources"), "addresses"), "address: true requests it already")
    read.setdefault("placement", DEFAULT_PLACEMENT)
    if read["placement"] != "global":
        read.setdefault("replicas", DEFAULT_REPLICAS)
    # AVA: a service instance is never moved at will (only when its host goes down or a change makes it
    # ineligible), so services are not preemptible unless they opt in; jobs keep priority < 100 (KAI).
    read.setdefault("preemptible", SERVICE_PREEMPTIBLE_DEFAULT)
    apply_ranking_defaults(read)
    return read


def check_placement(problems: Problems, path: str, read: dict[str, Any], raw: dict[str, Any]) -> None:
    """The placement rules a service must satisfy before anything is stored (C4, C5)."""
    placement = read.get("placement", DEFAULT_PLACEMENT)
    service = read.get("name", "")
    if placement == "global" and "replicas" in raw:
        problems.add(
            at(path, "replicas"),
            f'service "{service}" uses placement=global; remove replicas '
            "(global runs one replica per ready node)",
        )
    hosts = read.get("hosts")
    if placement == "hosts":
        replicas = read.get("replicas", DEFAULT_REPLICAS)
        if not hosts:
            problems.add(at(path, "hosts"), "required with placement=hosts: list the nodes that may run it")
        elif isinstance(replicas, int) and replicas > len(hosts):
            problems.add(
                at(path, "replicas"),
                f"{replicas} replicas but {len(hosts)} hosts listed; "
                "placement=hosts runs at most one replica per host",
            )
    elif hosts:
        # An empty list is harmless (the spec's own example writes `hosts: []`); a listed host is not.
        problems.add(at(path, "hosts"), f"hosts is only used with placement=hosts (this is {placement})")


def read_spec(problems: Problems, value: object, name: str) -> dict[str, Any]:
    fields = {"services": list_of(read_service, non_empty=True), "timeslot": timeslot}
    read = read_object(problems, "spec", value, fields, required=("services",))
    seen: set[str] = set()
    for index, service in enumerate(read.get("services", [])):
        service_name = service.get("name")
        if service_name in seen:
            problems.add(at(at("spec.services", index), "name"), f'service "{service_name}" is defined twice')
        if isinstance(service_name, str):
            seen.add(service_name)
    return read


read_status = free_form_status
