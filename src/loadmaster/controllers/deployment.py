"""Deployment controller: the replicas of every service, by index or (``global``) by host.

* index-named services (spread, pack, hosts): ``replicas`` copies named ``<deployment>-<service>-<i>``,
  ``i`` from the service's counter, which only grows (JACO D1): a scale-up takes the next indices and
  moves the counter in the same transaction; a scale-down removes the highest indices first.
* ``global``: one copy ``<deployment>-<service>-<host>`` per Ready node (JACO C5, D2). A node that
  leaves the ready set loses its copy (dropped, never moved: G4); a node that joins gets one, unless it
  is cordoned.
* a changed service spec (``spec_hash``, JACO D3/D4): every replica still running the old spec is
  removed and a new one created in its place at once. Rolling one replica at a time (RolloutPlan, E1-E4)
  belongs to the rollout feature; until then a spec change re-creates all changed replicas together.
* Failed replicas keep their slot: they are never replaced automatically (A7) until the spec changes.

Replicas that are already leaving (Terminating, Terminated) fill no slot, but a global replica's
record still holds its name, so its replacement waits until the record is gone. A make-before-break
replacement (``X.next``, ``controllers/replacement.py``) and its replica X are ONE slot: the
replacement is never counted, scaled down or re-created here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from loadmaster.controllers.changes import Change, CreateGlobalReplica, CreateServiceReplicas, DeleteReplica
from loadmaster.controllers.node_health import is_ready
from loadmaster.controllers.removal import remove
from loadmaster.controllers.views import DeploymentView, NodeView, ReplicaView, ServiceView
from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR

GLOBAL = "global"


@dataclass(frozen=True, slots=True)
class DeploymentObserved:
    """What the store holds for one deployment: its replicas, its services' counters, the nodes."""

    replicas: Sequence[ReplicaView]
    counters: Mapping[str, int]  # service -> next index to hand out
    nodes: Sequence[NodeView]
    heartbeat_window: timedelta = HEARTBEAT_FRESH_FOR  # a node heard from within it is Ready


def reconcile_deployment(
    name: str, desired: DeploymentView | None, observed: DeploymentObserved, now: datetime
) -> list[Change]:
    """The changes that make deployment ``name``'s replicas match ``desired`` (None: it was deleted)."""
    by_service: dict[str | None, list[ReplicaView]] = {}
    for replica in sorted(observed.replicas, key=lambda r: r.name):
        by_service.setdefault(replica.service, []).append(replica)
    services = {service.name: service for service in desired.services} if desired else {}
    changes: list[Change] = []
    for service_name, replicas in by_service.items():
        if service_name not in services:
            reason = "DeploymentDeleted" if desired is None else "ServiceRemoved"
            message = (
                f"deployment {name} was deleted"
                if desired is None
                else f"service {service_name} is no longer in deployment {name}"
            )
            changes.extend(remove(r, reason, message) for r in replicas if not r.is_leaving)
    for service in services.values():
        replicas = by_service.get(service.name, [])
        if service.placement == GLOBAL:
            changes.extend(_reconcile_global(name, service, replicas, observed, now))
        else:
            counter = observed.counters.get(service.name, 0)
            changes.extend(_reconcile_indexed(name, service, replicas, counter))
    return changes


def _reconcile_indexed(
    deployment: str, service: ServiceView, replicas: list[ReplicaView], counter: int
) -> list[Change]:
    changes: list[Change] = []
    active: list[ReplicaView] = []
    for replica in replicas:
        if replica.is_leaving or replica.is_replacement:  # a replacement fills its replica's slot
            continue
        if replica.index is None:  # a global replica left over from before a placement change
            changes.append(remove(replica, "PlacementChanged", f"service {service.name} is no longer global"))
        elif replica.spec_hash != service.spec_hash:
            changes.append(remove(replica, "SpecChanged", f"service {service.name} spec changed; re-created"))
        else:
            active.append(replica)
    active.sort(key=lambda r: r.index if r.index is not None else -1)
    surplus = active[service.replicas :]
    for replica in reversed(surplus):  # highest index first, so the oldest replicas stay
        changes.append(
            remove(replica, "ScaledDown", f"service {service.name} scaled down to {service.replicas}")
        )
    missing = service.replicas - len(active)
    if missing > 0:
        # The counter never moves back; an index above it (a counter lost or restored from an old backup)
        # still must not be handed out again.
        highest = max((r.index for r in replicas if r.index is not None), default=-1)
        start = max(counter, highest + 1)
        indices = tuple(range(start, start + missing))
        changes.append(CreateServiceReplicas(deployment, service.name, indices, start + missing))
    return changes


def _reconcile_global(
    deployment: str,
    service: ServiceView,
    replicas: list[ReplicaView],
    observed: DeploymentObserved,
    now: datetime,
) -> list[Change]:
    ready = {node.name: node for node in observed.nodes if is_ready(node, now, observed.heartbeat_window)}
    known = {node.name for node in observed.nodes}
    changes: list[Change] = []
    holding_name: set[str] = set()  # hosts whose replica record exists, in any phase
    for replica in replicas:
        if replica.is_replacement:  # fills its replica's slot; the replacement rule decides about it
            continue
        if replica.host is not None:
            holding_name.add(replica.host)
        if replica.is_leaving:
            continue
        if replica.host is None:
            changes.append(remove(replica, "PlacementChanged", f"service {service.name} is now global"))
        elif replica.host not in ready and replica.host in known:
            # Nobody can confirm a stop on a silent node: the record goes at once, and the agent stops
            # what is no longer assigned to it when it comes back (the timeline spec's "Down hosts").
            message = f"node {replica.host} is NotReady; global replica dropped"
            changes.append(DeleteReplica(replica.name, replica.revision, "NodeNotReady", message))
        elif replica.host not in ready:
            message = f"node {replica.host} was deleted; global replica dropped"
            changes.append(DeleteReplica(replica.name, replica.revision, "NodeDeleted", message))
        elif replica.spec_hash != service.spec_hash:
            changes.append(remove(replica, "SpecChanged", f"service {service.name} spec changed; re-created"))
    for host in sorted(ready):
        if host not in holding_name and not ready[host].unschedulable:
            changes.append(CreateGlobalReplica(deployment, service.name, host))
    return changes
