"""What a cycle's writes add to the metrics and the log, counted in one pass off the event loop.

``plan_writes`` runs in a worker thread; the tally of what it planned is made there too, in one pass
over the updates and the kept retries. The scheduler (on the loop) then uses it as it is when every
update was written, which is the rule: a cycle of 10,000 waits used to walk its updates six times on
the loop after its writes (~10 ms). Only a cycle with conflicts (updates not written) is tallied again,
on the loop, over what was written.

    decisions[kind]      updates of each kind (bind, wait, ...), kept retries not counted (not written)
    failures[label]      waits and kept retries by the reason label of ``loadmaster_failures_total``
    retries              waits still at the normal cadence; ``max_retries``: waits in the backoff
    entering             the first BACKOFF_LOG_LINES + 1 waits entering the backoff; ``entering_count``
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from loadmaster.runtime.scheduling.cycle_writes import KeptRetry, ReplicaUpdate

# Replicas entering their backoff in one cycle logged one line each; the rest in one line with their count
# (10,000 replicas that fit nowhere: 10,000 lines held the event loop ~0.5 s; audit has each of them).
BACKOFF_LOG_LINES = 20


@dataclass(slots=True)
class CycleTally:
    decisions: Counter[str] = field(default_factory=Counter)
    binds_per_node: Counter[str] = field(default_factory=Counter)
    bound_created_at: list[datetime] = field(default_factory=list)  # for the pending -> scheduled histogram
    moves_to: list[str] = field(default_factory=list)  # the destination of each move (the move ledger)
    failures: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    max_retries: int = 0
    entering: list[ReplicaUpdate] = field(default_factory=list)
    entering_count: int = 0

    @classmethod
    def of(cls, updates: Iterable[ReplicaUpdate], kept: Iterable[KeptRetry]) -> CycleTally:
        tally = cls()
        for update in updates:
            kind = update.kind
            tally.decisions[kind] += 1
            if kind == "wait":
                tally.failures[update.failure or "unknown"] += 1
                if update.backoff:
                    tally.max_retries += 1
                else:
                    tally.retries += 1
                if update.entered_backoff:
                    tally.entering_count += 1
                    if len(tally.entering) <= BACKOFF_LOG_LINES:
                        tally.entering.append(update)
            elif kind == "bind" and update.node is not None:
                tally.binds_per_node[update.node] += 1
                if update.created_at is not None:
                    tally.bound_created_at.append(update.created_at)
            elif kind == "move" and update.node is not None:
                tally.moves_to.append(update.node)
        for retry in kept:
            tally.failures[retry.failure or "unknown"] += 1
        return tally
