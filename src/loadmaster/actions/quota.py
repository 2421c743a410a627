"""Queue quota checks before placing: limits at every level, and the non-preemptible rule.

A non-preemptible job may only use what its queue is guaranteed (deserved), at every level, because
nothing can ever take it back; preemptible jobs may go above deserved up to the limits.
"""

from __future__ import annotations

import numpy as np

from loadmaster.queues.capacity import fits_limits, fits_non_preemptible_quota
from loadmaster.queues.hierarchy import BoolArray
from loadmaster.session import IntArray, Session


def non_preemptible_refusal(session: Session, j: int, tasks: list[int]) -> str | None:
    """A non-preemptible job must fit its queue's deserved quota at every level with ``tasks`` (before
    any eviction: victims are preemptible, so they never count against it)."""
    if session.snapshot.jobs[j].preemptible:
        return None
    queues = session.queues
    return fits_non_preemptible_quota(
        queues.usage, queues.tree, int(queues.job_leaf[j]), session.request_of(tasks)
    )


def quota_refusal(session: Session, j: int, tasks: list[int]) -> str | None:
    """Why job j may not place ``tasks`` now, or None. Without a limit on its leaf's path (nor, for a
    non-preemptible job, a deserved quota) nothing is governed, and both checks find nothing to refuse:
    their request is not even summed (a backlog's gangs are asked every cycle)."""
    queues = session.queues
    leaf = int(queues.job_leaf[j])
    tree = queues.tree
    path = tree.paths[leaf]
    governed = bool(tree.limit_set[:, path].any())
    if not session.snapshot.jobs[j].preemptible:
        governed = governed or bool(tree.deserved_set[:, path].any())
    if not governed:
        return None
    request = session.request_of(tasks)
    refusal = fits_limits(queues.usage, queues.tree, leaf, request)
    if refusal is None and not session.snapshot.jobs[j].preemptible:
        refusal = fits_non_preemptible_quota(queues.usage, queues.tree, leaf, request)
    return refusal


def over_limit_after(session: Session, j: int, used: BoolArray | None = None) -> str | None:
    """After a simulated scenario (usage already includes it): is job j's queue, or an ancestor, over a
    limit in a resource the job uses? Victims' usage is already gone, so evicting within the same
    queue (preempt) or under a shared parent (reclaim) counts, unlike a check made beforehand.
    ``used``: the resources job j requests (computed here when not given)."""
    queues = session.queues
    tree, usage = queues.tree, queues.usage
    path = tree.paths[int(queues.job_leaf[j])]
    if used is None:
        used = session.request_of(list(session.snapshot.job_tasks[j])) > 0
    over = tree.limit_set[:, path] & used[:, None] & (usage.allocated[:, path] > tree.limit[:, path])
    if not over.any():
        return None
    r, p = (int(x[0]) for x in np.nonzero(over))
    queue, resource = int(path[p]), tree.resources[r]
    return f"queue {tree.names[queue]} would exceed its {resource} limit"


def copies_within_quota(session: Session, j: int, request: IntArray) -> int:
    """How many copies of ``request`` job j's queue (and ancestors) can still take: min over bounds
    of ``(bound - allocated) // request`` for every governed resource the request uses."""
    queues = session.queues
    tree, usage = queues.tree, queues.usage
    path = tree.paths[int(queues.job_leaf[j])]
    bounds = [(tree.limit, tree.limit_set, usage.allocated)]
    if not session.snapshot.jobs[j].preemptible:
        bounds.append((tree.deserved, tree.deserved_set, usage.allocated_non_preemptible))
    best = np.iinfo(np.int64).max
    used = request > 0
    for bound, governed, allocated in bounds:
        mask = governed[:, path] & used[:, None]
        if mask.any():
            room = (bound[:, path] - allocated[:, path]) // np.maximum(request[:, None], 1)
            best = min(best, int(room[mask].min()))
    return max(best, 0)
