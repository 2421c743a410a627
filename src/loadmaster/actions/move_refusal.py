"""Whether consolidation's moves keep the voluntary-move ledger's rules (``core/voluntary_moves.py``).

The rules are the ledger's; this reads them off the cycle's working state: a moved task's pin, its
replacement in flight, its cooldown, its destination's cooldown and pressure after the move.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.resources import CPU, MEMORY
from loadmaster.core.voluntary_moves import (
    DEFAULT_FOOTPRINT,
    DST_CAP,
    REPLACEMENT_SUFFIX,
    REPLICA_COOLDOWN_S,
    VoluntaryMoves,
    is_pinned,
)


def move_refusal(snapshot: ClusterSnapshot, moved: Sequence[int], ledger: VoluntaryMoves) -> str:
    """Why moving ``moved`` (tasks placed on their new node in the snapshot's working state) breaks the
    ledger, or "" when it does not."""
    cpu, memory = snapshot.res_index.get(CPU), snapshot.res_index.get(MEMORY)
    for t in moved:
        task = snapshot.tasks[t]
        refusal = task_move_refusal(snapshot, t, ledger)
        if refusal:
            return refusal
        n = int(snapshot.state.task_node[t])
        node = snapshot.node_names[n]
        if node in ledger.closed_nodes:
            return f"{node} is closed to voluntary moves (cooldown or late heartbeat)"
        ewma = ledger.pressure.get(node)
        if ewma is None:
            continue  # no data: no pressure to push over the cap
        after = []
        for r, resource, default, used in (
            (cpu, CPU, DEFAULT_FOOTPRINT[0], ewma[0]),
            (memory, MEMORY, DEFAULT_FOOTPRINT[1], ewma[1]),
        ):
            declared = resource in task.request and r is not None and snapshot.node_alloc[r, n] > 0
            after.append(used + (task.request[resource] / snapshot.node_alloc[r, n] if declared else default))
        if max(after) >= DST_CAP:
            return f"moving {task.name} would push {node} to pressure {max(after):.2f} (cap {DST_CAP:g})"
    return ""


def task_move_refusal(snapshot: ClusterSnapshot, t: int, ledger: VoluntaryMoves) -> str:
    """Why task t may not be moved at all, wherever it would go (its pin, its replacement in flight, its
    cooldown), or "" when it may."""
    task = snapshot.tasks[t]
    if is_pinned(task.hosts, len(task.volumes)):
        return f"{task.name} is stateful or pinned: never moved voluntarily"
    if task.name.endswith(REPLACEMENT_SUFFIX) or task.name in snapshot.replaced_names:
        return f"{task.name} is being replaced already"
    if task.bound_at_s is not None and ledger.now_s - task.bound_at_s < REPLICA_COOLDOWN_S:
        return f"{task.name} was placed or moved in the last {REPLICA_COOLDOWN_S / 60:g} minutes"
    return ""
