"""Hierarchical queues: the tree, fair share, usage accounting, ordering, capacity and reclaim rules.

Pure functions and small objects over integer-indexed numpy arrays laid out (resources, queues); no
I/O, no clock. The semantics follow NVIDIA KAI Scheduler (``shared/reference/kai-semantics.md``).
"""

from loadmaster.queues.capacity import fits_limits, fits_non_preemptible_quota
from loadmaster.queues.entitlement import allocatable_share, exceeds_deserved, is_within_deserved
from loadmaster.queues.hierarchy import QueueConfigError, QueueTree
from loadmaster.queues.ordering import job_order_key, next_leaf, next_victim_leaf, victim_order_key
from loadmaster.queues.reclaim_rules import (
    Reclaimer,
    VictimChunk,
    can_reclaim,
    fits_reclaim_rules,
    may_reclaim_from,
)
from loadmaster.queues.report import queues_report
from loadmaster.queues.shares import compute_fair_share
from loadmaster.queues.standing import QueueStanding, compare_queues, queue_order_key, queue_standing
from loadmaster.queues.tournament import QueueTournament
from loadmaster.queues.usage import QueueUsage

__all__ = [
    "QueueConfigError",
    "QueueStanding",
    "QueueTournament",
    "QueueTree",
    "QueueUsage",
    "Reclaimer",
    "VictimChunk",
    "allocatable_share",
    "can_reclaim",
    "compare_queues",
    "compute_fair_share",
    "exceeds_deserved",
    "fits_limits",
    "fits_non_preemptible_quota",
    "fits_reclaim_rules",
    "is_within_deserved",
    "job_order_key",
    "may_reclaim_from",
    "next_leaf",
    "next_victim_leaf",
    "queue_order_key",
    "queue_standing",
    "queues_report",
    "victim_order_key",
]
