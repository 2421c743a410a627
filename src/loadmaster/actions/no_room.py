"""Gangs that found no room in this allocate, remembered per equivalence class: later ones skip at O(1).

``place_all`` places a gang's tasks of one equivalence class by the engine's node choice, and that
choice depends only on the task's class and the working state when no scorer reads the task itself
(``TASK_SENSITIVE``: the rendezvous hash of its name). So if a gang of class C placed ``c`` tasks on a
state and found no node for the next one (the statement is then rolled back to that very state), any
gang whose first ``c + 1`` tasks are of class C, on the same state, places the same ``c`` and fails on
the next (``place_all`` stops at the first run of one class that fails, whatever follows it): its
outcome, and so its pending reason ("only c fit"), is known without placing anything.

The state is the same while this allocate has made no decision since (``stamp``: the decisions made so
far and the open statement's length; allocate only adds decisions, and a failed gang is rolled back).
Once something is placed the memo is stale and the next gang of C is tried in full (and remembered).

Cost: a backlog of Pending gangs of a few shapes costs one placement attempt per class between two
successful placements, instead of one per gang.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadmaster.session import Session, StateStamp


class NoRoomMemo:
    def __init__(self, session: Session) -> None:
        self._session = session
        self._failed: dict[
            int, tuple[StateStamp, int]
        ] = {}  # class -> (stamp, tasks that fit before failing)

    def _leading_class(self, tasks: Sequence[int], count: int) -> int | None:
        """The class of the first ``count`` tasks when they share one (None otherwise). ``place_all``
        places a gang's runs of one class in order and stops at the first run that fails: when the
        first c + 1 tasks share class C, the gang's fate on a state where C fits c is settled by them."""
        engine = self._session.engine
        cls = engine.class_of(tasks[0])
        # tasks are one job's: a job of one class needs no look at each task (a gang of hundreds)
        one_class = count <= 1 or engine.one_class_job(int(self._session.snapshot.task_job[tasks[0]]))
        if not one_class and any(engine.class_of(t) != cls for t in tasks[1:count]):
            return None
        return cls if engine.settled_by_class(tasks[0]) else None

    def unplaced(self, tasks: Sequence[int]) -> list[int] | None:
        """What ``place_all(tasks)`` would leave unplaced, when a gang of their class already failed on
        this very state with fewer tasks fitting than ``tasks`` holds; None: not known, place them."""
        known = self._failed.get(self._session.engine.class_of(tasks[0]))
        if known is None or known[0] != self._session.state_stamp() or len(tasks) <= known[1]:
            return None
        fitting = known[1]
        if self._leading_class(tasks, fitting + 1) is None:
            return None
        return list(tasks[fitting:])

    def note(self, tasks: Sequence[int], unplaced: Sequence[int]) -> None:
        """``place_all(tasks)`` left ``unplaced`` (non-empty: it rolled back to the state it started on)."""
        fitting = len(tasks) - len(unplaced)
        cls = self._leading_class(tasks, fitting + 1)
        if cls is not None:
            self._failed[cls] = (self._session.state_stamp(), fitting)
