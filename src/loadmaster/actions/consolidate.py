"""consolidate: move running preemptible tasks so that a pending preemptible job fits.

A scenario is valid only if every victim lands somewhere (Moved, or back on its own node): no
permanent evictions. At most ``config.max_consolidation_moves`` tasks are moved per cycle. Only
preemptible pending jobs are considered (KAI's rule: moving others' work for a job that could never
be moved itself would not be reversible).

With the control plane's move ledger (``config.voluntary_moves``, core/voluntary_moves.py) a scenario is
also refused when a moved task is stateful or pinned, was placed or moved in the last 10 minutes, lands
on a node closed to moves (cooldown, late heartbeat), or would push that node's pressure to 0.75: the
rebalancer and consolidation share one ledger, so neither undoes the other's move.

Once the cycle's moves budget is spent, a job whose first task fits no node's free room now is not
searched: with no move left, a valid scenario puts every victim back where it runs (a victim
Evicted or Moved is refused), so the end state is today's plus t1, and every placement having been
checked for room, t1's node had the room for it now (``victims/fit.py``, ``first_fits_nowhere``). The
search would try every offer and fail with the same note; on alibaba-2017 such searches were most of a
cycle, each playing thousands of scenarios.

With one move left (the control plane's default budget is one move per cycle), such a job is not
searched either when no running task could be that one move (``victims/one_move.py``: it would have to
leave t's node, cover what t lacks there, fit another node's free room now, and keep the ratio); when
some could, only the nodes holding a unit with one of them are asked for an offer.

Two more exact shortcuts, both in ``victims/``: a failed search settles the later searches of the same
task classes on the same state (``failed_searches.py``: consolidate's pool, victims and ``check``
ignore the preemptor), and an offer whose victims cannot all land again is refused before its
scenario is played (``landing.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from loadmaster.actions.evicting_action import run_evicting_action
from loadmaster.actions.move_refusal import move_refusal
from loadmaster.actions.victims.fit import first_fits_nowhere
from loadmaster.actions.victims.index import VictimIndex, Walked
from loadmaster.actions.victims.one_move import OneMoveLanding
from loadmaster.actions.victims.search import ScenarioOutcome, VictimRules, VictimSearch
from loadmaster.actions.victims.units import Unit
from loadmaster.session import Session

NAME = "consolidate"


def consolidate(session: Session) -> None:
    jobs = session.snapshot.jobs
    budget = session.snapshot.config.max_consolidation_moves
    ledger = session.snapshot.config.voluntary_moves

    def moves_made() -> int:
        return sum(1 for d in session.decisions if d.action == NAME and d.kind == "move")

    def check(search: VictimSearch, units: Sequence[Unit], outcome: ScenarioOutcome) -> str:
        if outcome.evicted:
            return f"{len(outcome.evicted)} victims would find no other node"
        moved_so_far = moves_made()
        if moved_so_far + len(outcome.moved) > budget:
            return f"{len(outcome.moved)} moves exceed the budget of {budget} per cycle"
        if ledger is not None:
            return move_refusal(session.snapshot, outcome.moved, ledger)
        return ""

    one_move: list[OneMoveLanding] = []  # made at the first search with one move left

    def one_move_walk(index: VictimIndex, job: int, tasks: Sequence[int]) -> list[Walked] | None:
        """The only nodes whose offer may be valid, with one move left, and their bounds
        (``victims/one_move.py``)."""
        if budget - moves_made() != 1 or not first_fits_nowhere(session, tasks):
            return None
        if not one_move:
            one_move.append(OneMoveLanding(index))
        return one_move[0].walk(job, tasks)

    def hopeless(index: VictimIndex, job: int, tasks: Sequence[int]) -> bool:
        if moves_made() >= budget:
            return first_fits_nowhere(session, tasks)
        walked = one_move_walk(index, job, tasks)
        return walked is not None and not walked

    rules = VictimRules(
        action=NAME,
        replace_victims=True,
        is_victim_job=lambda preemptor, victim: jobs[victim].preemptible,
        check=check,
        preemptor_key=lambda j: (),  # every preemptor has the same victims: the preemptible jobs
        moves_only=True,
        hopeless=hopeless,
        walk_only=one_move_walk,
        move_limit=lambda: budget - moves_made(),
        remember_failures=True,  # one pool for all; victims and ``check`` ignore the preemptor
    )
    run_evicting_action(session, rules, precheck=lambda *_: None, preemptible_only=True)
