"""Restart policy: a replica its agent reports failing (health failing past its retries, or an exit) is
restarted, up to its restart budget; failing once more after that makes it Failed for good.

The count (the timeline spec's exact reading of the seeds' "3 consecutive failures"): with budget ``b``,
failures 1..b each give a restart and ``restart_count`` = 1..b; failure ``b + 1`` gives Failed with
reason ``restart_exhausted`` and ``restart_count`` stays ``b``. A Running-and-healthy report clears the
count (written with the report itself, ``runtime/requests/writes/status_writes.py``). A Failed replica keeps
its slot and is never restarted or rescheduled by itself (CARA A7) until its deployment is applied with a
change (the deployment controller then replaces it as it replaces any replica of an old spec).

A restart is asked for once per failure: the change clears ``failure`` and writes the commands, and
nothing more is asked while the agent has not executed every command already written for it.
"""

from __future__ import annotations

from collections.abc import Iterable

from loadmaster.controllers.changes import Change, FailReplica, RestartReplica
from loadmaster.controllers.views import DEPLOYMENT, PLACED_PHASES, ReplicaView

RESTART_EXHAUSTED = "restart_exhausted"
# The seeds' budget (CARA A7's "3 consecutive failures", read as failed restarts): a service's
# `restart_budget` or the server's `restart_budget` setting changes it.
DEFAULT_RESTART_BUDGET = 3


def reconcile_restarts(replicas: Iterable[ReplicaView], default_budget: int) -> list[Change]:
    """A restart or a Failed mark for every placed replica of a deployment whose agent reported a failure."""
    changes: list[Change] = []
    for replica in sorted(replicas, key=lambda r: r.name):
        if not is_awaiting_restart(replica):
            continue
        assert replica.failure is not None
        budget = replica.restart_budget if replica.restart_budget is not None else default_budget
        if replica.restart_count >= budget:
            message = (
                f"{replica.failure} again after {replica.restart_count} restarts "
                f"(restart budget {budget}); not restarted until the deployment changes"
            )
            changes.append(FailReplica(replica.name, replica.revision, RESTART_EXHAUSTED, message))
        else:
            changes.append(
                RestartReplica(replica.name, replica.revision, replica.restart_count + 1, replica.failure)
            )
    return changes


def is_awaiting_restart(replica: ReplicaView) -> bool:
    """A deployment's placed replica reported failing, whose agent has executed every earlier command."""
    return (
        replica.owner_kind == DEPLOYMENT
        and replica.failure is not None
        and replica.phase in PLACED_PHASES
        and not replica.commands_pending
    )
