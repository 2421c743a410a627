"""Placing a set of tasks on one Statement, all or nothing (shared by allocate and the victim search).

Runs of identical tasks go through ``PlacementEngine.choose_many`` (one evaluation per run when the
scorers are local; a run that binds may be recorded as one ``Statement.allocate_many``). A task that
fits idle resources is bound, otherwise pipelined; when the set is a gang and any task of it is
pipelined, all of them are (they start together, once victims are gone).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby

from loadmaster.core.columns.snapshot import PIPELINED
from loadmaster.placement.engine import Choice
from loadmaster.placement.extension_points import IntArray
from loadmaster.session import Session


def place_all(session: Session, tasks: Sequence[int], action: str, pipeline_only: bool = False,
              gang: bool = True, reason: str = "",
              give_up: Callable[[int], bool] | None = None) -> list[int]:  # fmt: skip
    """Place every task or none. Returns the tasks left unplaced (empty on success); on failure the
    statement is rolled back to where it was. ``pipeline_only``: never bind directly (victim search).
    ``give_up(t)``, asked after each task is placed: True stops there, as if t had found no node."""
    statement, snapshot = session.statement, session.snapshot
    checkpoint = statement.checkpoint()
    placed: dict[int, int] = {}
    failed: list[int] = []

    def apply(t: int, choice: Choice) -> bool:
        if not choice.placed:
            failed.append(t)
            return False
        if choice.fits_idle and not pipeline_only:
            statement.allocate(t, choice.node, action, reason)
        else:
            statement.pipeline(t, choice.node, action, reason)
        placed[t] = choice.node
        if give_up is not None and give_up(t):
            failed.append(t)
            return False
        return True

    def apply_run(run: Sequence[int], nodes: IntArray) -> None:
        statement.allocate_many(run, nodes, action, reason)
        placed.update(zip(run, nodes.tolist(), strict=True))

    for _, run in groupby(tasks, key=session.engine.class_of):
        session.engine.choose_many(list(run), apply, None if pipeline_only or give_up else apply_run)
        if failed:
            statement.rollback(checkpoint)
            return [t for t in tasks if t not in placed] or failed
    if gang and len(tasks) > 1 and (snapshot.state.task_phase[list(tasks)] == PIPELINED).any():
        statement.rollback(checkpoint)
        for t in tasks:
            statement.pipeline(t, placed[t], action, reason)
    return []
