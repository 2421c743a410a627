"""Deployment controller: the replicas of every service, by index or (``global``) by host.

* index-named services (spread, pack, hosts): ``replicas`` copies named ``<deployment>-<service>-<i>``,
  ``i`` from the service's counter, which only grows (JACO D1): a scale-up takes the next indices and
  moves the counter in the same transaction; a scale-down removes the highest indices first.
* ``global``: one copy ``<deployment>-<service>-<host>`` per Ready node, cordoned or not (JACO C5,
  D2; the timeline spec's "Global": daemonsets tolerate cordon), except a node being removed (drain
  drops its copy). A node that leaves the ready set loses its copy (dropped, never moved: G4); a node
  that joins or comes back gets one, under the same id.
* a changed service spec (``spec_hash``, JACO D3/D4) of an indexed service: its replicas are replaced
  make-before-break (``deployment_rollout.py``): one at a time by a RolloutPlan when it has more than
  one replica (``rollout.py``), at once when it has one. A replica whose hash differs from its
  service's target (drift) is replaced the same way, never kept. A global service's replicas of an
  old spec are removed and re-created (one per node: a second copy would not fit beside it).
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
from loadmaster.controllers.deployments.deployment_rollout import GLOBAL, reconcile_rollout, service_targets
from loadmaster.controllers.deployments.rollout_plan import DEFAULT_STEP_TIMEOUT_S
from loadmaster.controllers.deployments.service_slots import DeploymentSlots, ServiceSlots
from loadmaster.controllers.nodes.node_health import is_ready
from loadmaster.controllers.removal import remove
from loadmaster.controllers.timeslots import is_slot_over, stop_at_slot_end
from loadmaster.controllers.views import DRAINING, DeploymentView, NodeView, ReplicaView, ServiceView
from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR


@dataclass(frozen=True, slots=True)
class DeploymentObserved:
    """What the store holds for one deployment: its replicas, its services' counters, the nodes.

    ``slots``: the same replicas indexed by service and index, kept current by the controller loop one
    change at a time; without it they are indexed from ``replicas`` here (O(replicas), for tests)."""

    replicas: Sequence[ReplicaView]
    counters: Mapping[str, int]  # service -> next index to hand out
    nodes: Sequence[NodeView]
    heartbeat_window: timedelta = HEARTBEAT_FRESH_FOR  # a node heard from within it is Ready
    rollout_step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S  # a service's rollout.step_timeout overrides it
    slots: DeploymentSlots | None = None


def reconcile_deployment(
    name: str, desired: DeploymentView | None, observed: DeploymentObserved, now: datetime
) -> list[Change]:
    """The changes that make deployment ``name``'s replicas match ``desired`` (None: it was deleted).

    An indexed service costs what changed (``service_slots.py``), not its size; a removed or global
    service walks its replicas."""
    slots = observed.slots if observed.slots is not None else DeploymentSlots.of(observed.replicas)
    if desired is not None and desired.timeslot_end is not None and is_slot_over(desired.timeslot_end, now):
        every = [replica for service in slots.services.values() for replica in service.every()]
        return stop_at_slot_end(name, desired.timeslot_end, every)
    services = {service.name: service for service in desired.services} if desired else {}
    changes: list[Change] = []
    for service_name in sorted(slots.services, key=str):
        if service_name not in services:
            reason = "DeploymentDeleted" if desired is None else "ServiceRemoved"
            message = (
                f"deployment {name} was deleted"
                if desired is None
                else f"service {service_name} is no longer in deployment {name}"
            )
            replicas = slots.services[service_name].every()
            changes.extend(remove(r, reason, message) for r in replicas if not r.is_leaving)
    targets = service_targets(desired) if desired else {}
    for service in services.values():
        if service.placement == GLOBAL:
            replicas = slots.service(service.name).every()
            changes.extend(_reconcile_global(name, service, replicas, observed, now))
        else:
            counter = observed.counters.get(service.name, 0)
            target = targets[service.name]
            changes.extend(_reconcile_indexed(name, service, slots.service(service.name), counter, target))
    if desired is not None:
        changes.extend(reconcile_rollout(desired, slots, now, observed.rollout_step_timeout_s))
    return changes


def _reconcile_indexed(
    deployment: str, service: ServiceView, slots: ServiceSlots, counter: int, target: str
) -> list[Change]:
    """Scale to ``service.replicas`` (the highest indices go first); the rollout
    (``deployment_rollout.py``) replaces the kept replicas whose hash is not ``target``."""
    changes: list[Change] = []
    for replica in slots.others.values():
        if replica.index is None and not replica.is_leaving:  # left over from before a placement change
            changes.append(remove(replica, "PlacementChanged", f"service {service.name} is no longer global"))
    for replica in slots.surplus(service.replicas):  # highest index first, so the oldest replicas stay
        changes.append(
            remove(replica, "ScaledDown", f"service {service.name} scaled down to {service.replicas}")
        )
    missing = service.replicas - len(slots)
    if missing > 0:
        # The counter never moves back; an index above it (a counter lost or restored from an old backup)
        # still must not be handed out again.
        start = max(counter, slots.highest_recorded() + 1)
        indices = tuple(range(start, start + missing))
        earlier = target if target != service.spec_hash else None  # an aborted rollout's last good spec
        changes.append(CreateServiceReplicas(deployment, service.name, indices, start + missing, earlier))
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
    for host in sorted(ready):  # cordoned or not: global replicas tolerate cordon, as daemonsets do
        draining = ready[host].drain is not None and ready[host].drain.state == DRAINING  # type: ignore[union-attr]
        if host not in holding_name and not draining:  # a node being removed drops its copy (drain.py)
            changes.append(CreateGlobalReplica(deployment, service.name, host))
    return changes
