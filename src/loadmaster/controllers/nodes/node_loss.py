"""Node loss (seed conflict 3): what the leader does about a node that stays NotReady.

Each NotReady node goes through these stages, read from its stored status alone, so a new leader
resumes where the old one stopped (only a probe in flight is lost: the new leader probes again)::

    NotReady at T            the Ready condition's transition, reason NotReadyAt (node_health.py)
    T + wait                 probe the host (at most probe_timeout, 5 s; no answer = host down)
    host down                act at once
    host up, agent down      the answer is stored (status.node_loss); act at probed_at + agent_down_wait
    act                      status.node_loss.lost_at; per policy, the node's replicas return to Pending

A node Ready again before the act keeps everything (its heartbeat clears ``status.node_loss``), and
nothing moves back when a lost node returns. Policies (per service ``node_loss_policy``, else the
cluster's): ``single_replica`` (AVA G2, the default) moves replicas of services with exactly one
replica, and job tasks; ``all`` moves every replica; ``none`` moves nothing. Global replicas are never
moved: the deployment controller drops them with their node. The act is level-triggered: a replica a
conflict kept on a lost node is moved by the next pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from loadmaster.controllers.changes import Change, MarkNodeLost, RecordNodeProbe, ReturnToPending
from loadmaster.controllers.views import JOB, PLACED_PHASES, NodeView, ReplicaView, ServiceView

SINGLE_REPLICA, ALL, NONE = "single_replica", "all", "none"
POLICIES = (SINGLE_REPLICA, ALL, NONE)
HOST_DOWN, AGENT_DOWN = "host_down", "agent_down"
NODE_LOST = "NodeLost"  # the Phase condition reason of a replica the policy moved
_NOT_READY = "NotReady"


@dataclass(frozen=True, slots=True)
class NodeLossSettings:
    """The seeds' defaults (AVA G2: 30 s, a probe of at most 5 s, 30 s more if only the agent is down)."""

    policy: str = SINGLE_REPLICA
    wait_s: float = 30.0
    agent_down_wait_s: float = 30.0
    probe_timeout_s: float = 5.0


@dataclass(frozen=True, slots=True)
class ProbeAnswer:
    """A probe's answer, not stored yet, for the NotReady spell that started at ``not_ready_at``."""

    not_ready_at: datetime
    answer: str  # HOST_DOWN | AGENT_DOWN
    at: datetime


@dataclass(slots=True)
class NodeLossPlan:
    changes: list[Change] = field(default_factory=list)
    probes: list[str] = field(default_factory=list)  # nodes to probe now
    next_due: datetime | None = None  # the earliest time a stage of some node is due


@dataclass(frozen=True, slots=True)
class Stage:
    """Where one NotReady node stands: ``probe`` now, ``act`` now (with its answer), or wait until ``due``."""

    probe: bool = False
    act: bool = False
    answer: str | None = None
    probed_at: datetime | None = None
    due: datetime | None = None


def stage_of(node: NodeView, now: datetime, settings: NodeLossSettings, fresh: ProbeAnswer | None) -> Stage:
    """The node's stage at ``now`` (``fresh``: a probe answer for it not stored yet)."""
    if node.state != _NOT_READY or node.not_ready_at is None or node.lost_at is not None:
        return Stage()
    answer, probed_at = node.probe, node.probed_at
    if answer is None and fresh is not None and fresh.not_ready_at == node.not_ready_at:
        answer, probed_at = fresh.answer, fresh.at
    if answer is None or probed_at is None:
        probe_at = node.not_ready_at + timedelta(seconds=settings.wait_s)
        return Stage(probe=True) if now >= probe_at else Stage(due=probe_at)
    act_at = probed_at
    if answer == AGENT_DOWN:
        act_at += timedelta(seconds=settings.agent_down_wait_s)
    if now >= act_at:
        return Stage(act=True, answer=answer, probed_at=probed_at)
    return Stage(answer=answer, probed_at=probed_at, due=act_at)


def policy_moves(
    replica: ReplicaView, services: Mapping[tuple[str, str], ServiceView], default_policy: str
) -> str | None:
    """The policy that moves ``replica`` off a lost node, or None if it stays."""
    if replica.host is not None or replica.phase not in PLACED_PHASES:
        return None
    if replica.owner_kind == JOB:
        return default_policy if default_policy in (SINGLE_REPLICA, ALL) else None
    service = services.get((replica.owner, replica.service or ""))
    if service is None:  # its deployment or service is going away: its controller removes it
        return None
    policy = service.node_loss_policy or default_policy
    if policy == ALL or (policy == SINGLE_REPLICA and service.replicas == 1):
        return policy
    return None


def _seconds(delta: timedelta) -> str:
    return f"{round(delta.total_seconds(), 3):g}s"


def reconcile_node_loss(
    nodes: Iterable[NodeView],
    replicas_on: Mapping[str, Sequence[ReplicaView]],
    services: Mapping[tuple[str, str], ServiceView],
    fresh: Mapping[str, ProbeAnswer],
    now: datetime,
    settings: NodeLossSettings,
) -> NodeLossPlan:
    """What to do now about every NotReady node. ``replicas_on``: the replicas placed on each NotReady
    node (only those whose stage acts, or that are lost, are read)."""
    plan = NodeLossPlan()
    for node in sorted(nodes, key=lambda n: n.name):
        if node.state != _NOT_READY or node.not_ready_at is None:
            continue
        if node.lost_at is not None:  # lost already: move what a conflict left behind
            plan.changes.extend(_moves(node, node.lost_at, replicas_on, services, settings))
            continue
        stage = stage_of(node, now, settings, fresh.get(node.name))
        if stage.probe:
            plan.probes.append(node.name)
        elif stage.act:
            assert stage.answer is not None and stage.probed_at is not None
            moves = _moves(node, now, replicas_on, services, settings, stage.answer)
            plan.changes.append(
                MarkNodeLost(
                    node.name,
                    node.revision,
                    node.not_ready_at,
                    stage.answer,
                    stage.probed_at,
                    settings.policy,
                    tuple(change.name for change in moves),
                    _lost_message(node, stage.answer, now, settings, len(moves)),
                )
            )
            plan.changes.extend(moves)
        elif stage.answer is not None and node.probe is None:
            assert stage.probed_at is not None
            plan.changes.append(RecordNodeProbe(node.name, node.revision, stage.answer, stage.probed_at))
        if stage.due is not None and (plan.next_due is None or stage.due < plan.next_due):
            plan.next_due = stage.due
    return plan


def _lost_message(node: NodeView, answer: str, now: datetime, settings: NodeLossSettings, moved: int) -> str:
    assert node.not_ready_at is not None
    return (
        f"node {node.name} lost: NotReady {_seconds(now - node.not_ready_at)}, probe: "
        f"{answer.replace('_', ' ')}, policy {settings.policy}; {moved} replica(s) placed again elsewhere"
    )


def _moves(
    node: NodeView,
    lost_at: datetime,
    replicas_on: Mapping[str, Sequence[ReplicaView]],
    services: Mapping[tuple[str, str], ServiceView],
    settings: NodeLossSettings,
    answer: str | None = None,
) -> list[ReturnToPending]:
    assert node.not_ready_at is not None
    answer = (answer or node.probe or HOST_DOWN).replace("_", " ")
    waited = _seconds(lost_at - node.not_ready_at)
    moves = []
    for replica in sorted(replicas_on.get(node.name, ()), key=lambda r: r.name):
        policy = policy_moves(replica, services, settings.policy)
        if policy is None or replica.node_ref != node.name:
            continue
        message = f"node {node.name} lost: NotReady {waited}, probe: {answer}, policy {policy}"
        moves.append(
            ReturnToPending(replica.name, replica.revision, NODE_LOST, message, node.name, node.not_ready_at)
        )
    return moves
