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
