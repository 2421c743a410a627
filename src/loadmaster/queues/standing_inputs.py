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

from loadmaster.queues.entitlement import allocatable_share
from loadmaster.queues.hierarchy import IntArray, QueueTree
from loadmaster.queues.standing import ZERO_SHARE_PENALTY, QueueStanding

Amount = Sequence[int]  # one value per resource of the tree, canonical units


class StandingInputs:
    """The parts of every queue's standing that stay fixed for a session, indexed by queue.

    ``allocatable[r, q] = min(limit, max(deserved, fair_share))`` (``entitlement.allocatable_share``)
    is computed here once instead of on every walk.
    """

    __slots__ = ("_deserved", "_fair_share", "_governed", "_guaranteed", "_scale", "_share", "_share_f",
                 "_share_tuple", "tree")  # fmt: skip

    def __init__(self, tree: QueueTree, fair_share: IntArray) -> None:
        shape = (len(tree.resources), tree.size)
        if fair_share.shape != shape:
            raise ValueError(f"fair_share: expected shape {shape}, got {fair_share.shape}")
        shares = allocatable_share(tree, fair_share)
        self.tree = tree
        self._fair_share: list[list[int]] = fair_share.T.tolist()
        self._deserved: list[list[int]] = tree.deserved.T.tolist()
        self._governed: list[list[bool]] = tree.deserved_set.T.tolist()
        self._guaranteed = [any(column) for column in self._governed]
        self._share: list[list[int]] = shares.T.tolist()
        self._share_f = [[float(s) for s in column] for column in self._share]
        self._share_tuple = [tuple(column) for column in self._share]
        self._scale: list[float] = tree.scale.tolist()

    def standing(
        self, queue: int, allocated: Amount, *, job: Amount | None = None, victims: Amount | None = None
    ) -> QueueStanding:
        """The standing of ``queue`` holding ``allocated``, with its candidate ``job`` and ``victims``.

        ``with_job = allocated + job``; the dominant share with the job measures ``with_job - victims``.
        """
        with_job = allocated if job is None else [a + j for a, j in zip(allocated, job, strict=True)]
        measured = with_job if victims is None else [w - v for w, v in zip(with_job, victims, strict=True)]
        governed = self._governed[queue]
        within = all(
            w <= d or not g for w, d, g in zip(with_job, self._deserved[queue], governed, strict=True)
        )
        return QueueStanding(
            queue=queue,
            over_utilised=all(f < a for f, a in zip(self._fair_share[queue], allocated, strict=True)),
            starved=self._guaranteed[queue] and within,
            priority=self.tree.priority[queue],
            uses_zero_share=any(s == 0 and w > 0 for s, w in zip(self._share[queue], with_job, strict=True)),
            dominant_share_with_job=self._dominant_share(queue, measured),
            dominant_share=self._dominant_share(queue, allocated),
            allocatable_share=self._share_tuple[queue],
            age=queue,
        )

    def _dominant_share(self, queue: int, amount: Amount) -> float:
        """``max(0, max_r amount[r] / allocatable[r])``; ``amount[r] / scale[r] * ZERO_SHARE_PENALTY``
        where the allocatable share is 0 (as ``standing.dominant_shares``)."""
        share = 0.0
        for a, s, scale in zip(amount, self._share_f[queue], self._scale, strict=True):
            ratio = float(a) / s if s > 0 else float(a) / scale * ZERO_SHARE_PENALTY
            share = max(share, ratio)
        return share
