"""One queue's standing from plain integers, with the session's fixed inputs looked up once.

``standing.queue_standings`` computes standings for whole columns of numpy arrays; the incremental
walk (``tournament.py``) recomputes only the one to three queues whose usage or best offer changed since
its last walk, where a numpy call per column costs far more than the arithmetic. So the fixed inputs of
every queue (fair share, deserved, allocatable share, priority) are turned into Python lists once, and
:meth:`StandingInputs.standing` evaluates the same rules as ``standing.py`` on short integer lists.

Exactness: every ratio is ``float(amount) / float(share)`` and every penalty term
``float(amount) / scale * ZERO_SHARE_PENALTY``, the same IEEE operations in the same order as the numpy
version, so both give bit-identical floats (a property test holds them equal).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from loadmaster.queues.entitlement import allocatable_share
from loadmaster.queues.hierarchy import IntArray, QueueTree
from loadmaster.queues.standing import ZERO_SHARE_PENALTY, QueueStanding

Amount = Sequence[int]  # one value per resource of the tree, canonical units


class StandingInputs:
    """The parts of every queue's standing that stay fixed for a session, indexed by queue.

    ``allocatable[r, q] = min(limit, max(deserved, fair_share))`` (``entitlement.allocatable_share``)
    is computed here once instead of on every walk.
    """

    __slots__ = ("_guaranteed", "_resources", "_share_tuple", "tree")

    def __init__(self, tree: QueueTree, fair_share: IntArray) -> None:
        shape = (len(tree.resources), tree.size)
        if fair_share.shape != shape:
            raise ValueError(f"fair_share: expected shape {shape}, got {fair_share.shape}")
        shares = allocatable_share(tree, fair_share)
        self.tree = tree
        self._guaranteed = [bool(tree.deserved_set[:, q].any()) for q in range(tree.size)]
        self._share_tuple = [tuple(column) for column in shares.T.tolist()]
        # per queue, per resource: everything the rules read, so one loop over the resources does it all
        self._resources = [
            [
                _Fixed(
                    fair_share=int(fair_share[r, q]),
                    deserved=int(tree.deserved[r, q]),
                    governed=bool(tree.deserved_set[r, q]),
                    allocatable=int(shares[r, q]),
                    divisor=float(shares[r, q]),
                    scale=float(tree.scale[r]),
                )
                for r in range(len(tree.resources))
            ]
            for q in range(tree.size)
        ]

    def standing(
        self, queue: int, allocated: Amount, *, job: Amount | None = None, victims: Amount | None = None
    ) -> QueueStanding:
        """The standing of ``queue`` holding ``allocated``, with its candidate ``job`` and ``victims``.

        ``with_job = allocated + job``; the dominant share with the job measures ``with_job - victims``.
        Written as one plain loop over the resources because it runs for every changed queue of every
        walk (a few microseconds, where numpy costs a few per call).
        """
        over_utilised, within, uses_zero_share = True, True, False
        share, share_with_job = 0.0, 0.0
        for r, fixed in enumerate(self._resources[queue]):
            held = allocated[r]
            with_job = held if job is None else held + job[r]
            measured = with_job if victims is None else with_job - victims[r]
            over_utilised = over_utilised and fixed.fair_share < held
            within = within and (with_job <= fixed.deserved or not fixed.governed)
            uses_zero_share = uses_zero_share or (fixed.allocatable == 0 and with_job > 0)
            if fixed.allocatable > 0:
                share = max(share, float(held) / fixed.divisor)
                share_with_job = max(share_with_job, float(measured) / fixed.divisor)
            else:  # the penalty term, in the order dominant_shares computes it
                share = max(share, float(held) / fixed.scale * ZERO_SHARE_PENALTY)
                share_with_job = max(share_with_job, float(measured) / fixed.scale * ZERO_SHARE_PENALTY)
        return QueueStanding(
            queue,
            over_utilised,
            self._guaranteed[queue] and within,
            self.tree.priority[queue],
            uses_zero_share,
            share_with_job,
            share,
            self._share_tuple[queue],
            queue,
        )


class _Fixed(NamedTuple):
    """One queue's fixed inputs for one resource."""

    fair_share: int
    deserved: int
    governed: bool
    allocatable: int
    divisor: float  # the allocatable share as a float, the divisor of the dominant share
    scale: float  # canonical units per user unit, for the zero-share penalty
