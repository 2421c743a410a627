"""The log of nodes whose working state changed, shared by every Statement on one snapshot.

Caches of per-node values (the engine's per-class totals, ``placement/totals_cache.py``) read it to
refresh only the nodes that changed since they last looked.
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.columns.snapshot import ClusterSnapshot, IntArray


class NodeChanges:
    """The nodes whose working state changed, in order: one log per snapshot, shared by its statements.

    A reader keeps a mark ``(epoch, length)``; ``since(mark)`` gives the nodes changed after it (sorted,
    distinct), or None when the log was cleared since (then the reader recomputes every node). The log
    is cleared once it holds ``LIMIT`` entries, so it stays bounded however long a session runs.

    With ``n_nodes`` given, each node also keeps the position of its latest entry (``stamp``), so a mark
    far behind is answered by one scan of the nodes instead of by joining every entry since (a class of
    tasks looked at again after hundreds of placements: on openb this halved the time spent here)."""

    LIMIT = 1 << 16
    # Up to this many entries since a mark are joined; beyond, the stamps are scanned.
    JOIN_AT_MOST = 16

    def __init__(self, n_nodes: int | None = None) -> None:
        self.epoch = 0
        self._log: list[int | IntArray] = []
        self._stamp = None if n_nodes is None else np.zeros(n_nodes, dtype=np.int64)

    @classmethod
    def of(cls, snapshot: ClusterSnapshot) -> NodeChanges:
        log = snapshot.memo.get(("node_changes",))
        if log is None:
            log = snapshot.memo[("node_changes",)] = cls(snapshot.n_nodes)
        assert isinstance(log, NodeChanges)
        return log

    def add(self, nodes: int | IntArray) -> None:
        if len(self._log) >= self.LIMIT:
            self.epoch += 1
            self._log.clear()
            if self._stamp is not None:
                self._stamp[:] = 0
        self._log.append(nodes)
        if self._stamp is not None:
            self._stamp[nodes] = len(self._log)

    def mark(self) -> tuple[int, int]:
        return self.epoch, len(self._log)

    def since(self, mark: tuple[int, int]) -> IntArray | None:
        epoch, length = mark
        if epoch != self.epoch:
            return None
        if self._stamp is not None and len(self._log) - length > self.JOIN_AT_MOST:
            return np.flatnonzero(self._stamp > length)
        entries = self._log[length:]
        if len(entries) == 1:
            return np.unique(np.asarray(entries[0], dtype=np.int64))
        if not entries:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate([np.asarray(e, dtype=np.int64).reshape(-1) for e in entries]))
