"""A previewed Deployment's services as the deployment controller's next pass leaves them (its rules:
``controllers/deployments/deployment.py``, ``deployment_rollout.py``, ``rollout.py``), so that the
preview's cycle sees the replicas the real cycle after an apply would see.

Index-named services (spread, pack, hosts):

* the lowest indices are kept up to ``replicas``; the others (a scale-down) go Terminating and hold
  their nodes while they stop; missing ones take the next indices (above the counter and every index);
* a kept replica running the applied spec (same ``spec_hash``) stays, same name and node;
* a kept replica of another spec is replaced make-before-break: its replacement ``<name>.next`` waits
  to be placed while it keeps running. A service of one replica replaces at once; a service of more
  is rolled one replica per deployment at a time (the lowest index first), and a step waits while a
  replacement is in flight in the deployment or a replica of the applied spec is not Running; the
  others keep running their old spec until their step;
* Failed replicas keep their slot and hold nothing.

Global services: one replica ``<deployment>-<service>-<host>`` per Ready node, cordoned or not. A host's
replica of the applied spec stays; one of another spec is removed (Terminating, holding its node), and
its host gets a new one only once that record is gone (not in this pass).

All replicas of a service are one job (``service_jobs.jobs_for``), the stopping ones included, as in
the scheduler's model: they count for the service's spread and are never victims of its own gang.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loadmaster.core.model import Task
from loadmaster.manifests import DEPLOYMENT, REPLICA, Manifest, service_replica, task_from_replica
from loadmaster.manifests.model.task_model import is_schedulable
from loadmaster.manifests.replica_specs import service_spec_hash
from loadmaster.manifests.replicas import ReplicaPhase, replacement_name
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.scheduling.model.model_entries import replica_order

# Phases of a replica that is going away: it fills no slot of its service
# (controllers/deployments/deployment.py).
_LEAVING = frozenset({ReplicaPhase.TERMINATING.value, ReplicaPhase.TERMINATED.value})
_RUNNING = ReplicaPhase.RUNNING.value
_PENDING = ReplicaPhase.PENDING.value


@dataclass(slots=True)
class ServiceAfterApply:
    """A service's replicas after the controller's pass, as tasks. ``holding()`` and ``pending()`` list
    them in the order the scheduling model gives the engine (``replica_order``): the engine's choices
    (which replica consolidation moves, which one a run places first) follow the input order, so the
    preview must see the one the cycle after an apply sees."""

    staying: list[Task] = field(default_factory=list)  # keep their node: previewed as "stays"
    stopping: list[Task] = field(default_factory=list)  # hold a node, not previewed: replaced or removed
    waiting: list[Task] = field(default_factory=list)  # Pending: the preview places them
    order: dict[str, tuple[int, str]] = field(default_factory=dict)  # by replica name

    def add(self, tasks: list[Task], obj: Mapping[str, Any]) -> None:
        """Put the replica ``obj`` (if schedulable) in ``tasks``, one of the three lists."""
        if is_schedulable(obj):
            name = obj["metadata"]["name"]
            self.order[name] = replica_order(name, obj.get("spec", {}))
            tasks.append(task_from_replica(obj))

    def holding(self) -> list[Task]:
        return sorted([*self.staying, *self.stopping], key=lambda task: self.order[task.name])

    def pending(self) -> list[Task]:
        return sorted(self.waiting, key=lambda task: self.order[task.name])


@dataclass(slots=True)
class DeploymentRoll:
    """Whether the deployment's one rollout step is taken (or waits) already: later services wait."""

    busy: bool = False


def _phase(obj: dict[str, Any]) -> str:
    return str(obj.get("status", {}).get("phase", _PENDING))


def _records(cache: ObjectCache, deployment: str, service: str) -> list[dict[str, Any]]:
    return [
        cached.obj
        for cached in cache.objects[REPLICA].values()
        if (spec := cached.obj.get("spec", {})).get("owner_kind") == DEPLOYMENT
        and spec.get("owner") == deployment
        and spec.get("service") == service
    ]


def replacement_in_flight(cache: ObjectCache, deployment: str) -> bool:
    """A replacement ``X.next`` of the deployment is being placed or started (a step is taken)."""
    return any(
        (spec := cached.obj.get("spec", {})).get("owner_kind") == DEPLOYMENT
        and spec.get("owner") == deployment
        and spec.get("replaces")
        and _phase(cached.obj) not in _LEAVING
        for cached in cache.objects[REPLICA].values()
    )


def _stopped(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` as the controller leaves a removed replica: Terminating on its node."""
    return {**obj, "status": {**obj.get("status", {}), "phase": ReplicaPhase.TERMINATING.value}}


def indexed_service_after_apply(
    manifest: Manifest, service: dict[str, Any], cache: ObjectCache, roll: DeploymentRoll
) -> ServiceAfterApply:
    """An index-named service after the controller's pass (module doc)."""
    name = service["name"]
    count = int(service.get("replicas", 1))
    wanted_hash = service_spec_hash(manifest, name)
    records = _records(cache, manifest.name, name)
    slots = sorted(
        (
            obj
            for obj in records
            if "index" in obj.get("spec", {})
            and not obj["spec"].get("replaces")
            and _phase(obj) not in _LEAVING
        ),
        key=lambda obj: int(obj["spec"]["index"]),
    )
    kept, surplus = slots[:count], slots[count:]
    stale = [obj for obj in kept if obj["spec"].get("spec_hash") != wanted_hash]
    if count <= 1:
        replaced = stale
    elif roll.busy:
        replaced = []
    else:
        waits = any(o["spec"].get("spec_hash") == wanted_hash and _phase(o) != _RUNNING for o in slots)
        replaced = stale[:1] if stale and not waits else []
        roll.busy = bool(stale)
    replaced_names = {obj["metadata"]["name"] for obj in replaced}
    after = ServiceAfterApply()
    for obj in kept:
        if obj["metadata"]["name"] in replaced_names:
            after.add(after.stopping, obj)
        elif _phase(obj) == _PENDING:
            after.add(after.waiting, obj)
        else:
            after.add(after.staying, obj)
    for obj in surplus:
        if _phase(obj) != _PENDING:
            after.add(after.stopping, _stopped(obj))
    for obj in replaced:
        replacement = service_replica(manifest, name, index=int(obj["spec"]["index"])).to_dict()
        named = replacement_name(obj["metadata"]["name"])
        replacement["metadata"] = {**replacement["metadata"], "name": named}
        replacement["spec"] = {**replacement["spec"], "replaces": obj["metadata"]["name"]}
        source = obj.get("status", {}).get("node_ref")
        if source:  # as replacement_writes: where X runs is the replacement's stickiness hint (C9)
            replacement["status"] = {**replacement.get("status", {}), "previous_node_ref": source}
        after.add(after.waiting, replacement)
    counter = cache.counters.get((manifest.name, name), (0, 0))[0]
    indices = (int(obj["spec"]["index"]) for obj in records if "index" in obj.get("spec", {}))
    highest = max(indices, default=-1)
    start = max(counter, highest + 1)
    for i in range(count - len(kept)):
        after.add(after.waiting, service_replica(manifest, name, index=start + i).to_dict())
    return after


def global_service_after_apply(
    manifest: Manifest, service: dict[str, Any], cache: ObjectCache, ready_hosts: Iterable[str]
) -> ServiceAfterApply:
    """A global service after the controller's pass (module doc)."""
    name = service["name"]
    wanted_hash = service_spec_hash(manifest, name)
    ready = set(ready_hosts)
    by_host: dict[str, dict[str, Any]] = {}
    after = ServiceAfterApply()
    for obj in _records(cache, manifest.name, name):
        host = obj.get("spec", {}).get("host")
        if host is None or obj["spec"].get("replaces"):
            continue
        by_host[host] = obj  # the record holds the host's name, leaving or not
        if _phase(obj) in _LEAVING:
            after.add(after.stopping, obj)
        elif host not in ready:
            continue  # dropped: a NotReady or deleted node's copy is deleted, not stopped
        elif obj["spec"].get("spec_hash") != wanted_hash:
            if _phase(obj) != _PENDING:
                after.add(after.stopping, _stopped(obj))
        elif _phase(obj) == _PENDING:
            after.add(after.waiting, obj)
        else:
            after.add(after.staying, obj)
    for host in sorted(ready - set(by_host)):
        after.add(after.waiting, service_replica(manifest, name, host=host).to_dict())
    return after
