"""The JSON answers the server and the Python client share, declared once.

``TypedDict`` classes: plain dicts at run time. The server builds them (``runtime/``), the OpenAPI
document describes them (``api/response_schemas.py`` hands these very classes to pydantic), and the
client types its answers with them (``client.py``). This module imports nothing of loadmaster and no
framework: ``import loadmaster.client`` (and so the CLI) never loads pydantic. ``typing_extensions``'
``TypedDict``, not ``typing``'s: pydantic reads only that one on Python < 3.12.
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict


class QueueFigures(TypedDict):
    """One queue's live fairness (``GET /api/queue-state``; ``queues/report.py`` computes the figures)."""

    parent: str | None
    priority: int
    over_quota_weight: float
    deserved: dict[str, float]
    limit: dict[str, float]
    fair_share: dict[str, float]
    allocated: dict[str, float]
    allocated_non_preemptible: dict[str, float]
    dominant_share: float
    siblings: list[str]  # the queues sharing its parent's quota
    last_reclaim: dict[str, Any] | None  # {at, replica, node, message} of its newest reclaim eviction
    requested: NotRequired[dict[str, float]]  # its subtree's demand, when it has any


class QueueState(TypedDict):
    """``GET /api/queue-state``: every queue's figures at ``at`` (ISO 8601)."""

    at: str
    queues: dict[str, QueueFigures]


class WhyAnswer(TypedDict):
    """``GET /api/replicas/{name}/why``: why a replica is where it is, or Pending.

    The stored part is the replica's Phase condition at its last attempt; for a Pending replica
    ``summary``, ``nodes`` and ``hints`` are computed again against the cluster as it is now
    (``fresh``), every node and every reason (the condition keeps only a few nodes)."""

    replica: str
    phase: str
    node_ref: str | None
    summary: dict[str, int]
    """rejection category -> how many nodes it rules out"""
    nodes: dict[str, str]
    """node -> every reason it fails"""
    hints: list[str]
    reason: str
    message: str
    attempts: int
    next_attempt_at: str | None
    last_attempt_at: str | None
    fresh: bool
    """the explanation was computed now, not read from the last attempt"""
    sticky: NotRequired[dict[str, Any]]
    """what ties the replica to a node (a previous node, volumes it holds), and a sentence saying so"""
    placement: NotRequired[dict[str, Any]]
    """a placed replica's decision record: how its node ranks for it"""
    scale_up: NotRequired[dict[str, Any]]
    """a Pending replica's verdict: fits now, fits after scale-up with a template, or infeasible"""
    pending: NotRequired[dict[str, Any]]
    """``placement: hosts``: the named hosts that are missing"""
    node_loss: NotRequired[dict[str, Any]]
    """the timeline of its node while NotReady, or of the lost node it was moved from"""


class ApplyItem(TypedDict):
    """What ``POST /api/apply`` did to one document, in the documents' order."""

    kind: str
    name: str
    action: str
    """created | configured | unchanged"""
