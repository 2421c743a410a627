"""Whether a cycle's pending GPU work exceeds its free GPUs by a margin: the regime in which ``gpu_pack``
keeps whole nodes for multi-GPU work (``gpu_fragmentation.py``, ``plugins/gpu_midfill_spread.py``).

With D the GPU requested by the Pending tasks, G the cluster's free GPU and C its GPU capacity
(milli-GPU; free counts what Releasing tasks hold, as every score does):

    excess = D - G,        oversubscribed  <=>  100 * excess > OVERSUBSCRIBED_PERCENT * C   (in integers)

``excess`` is GPU work that cannot run this cycle whatever the placement: tasks will wait in any case,
and what placement still decides is how much of the GPUs ends up idle. It does not change within a
cycle: placing a task takes its g from both D and G, evicting one gives g back to both. So the answer,
memoised on the snapshot, is the same for every decision of the cycle, however late it is first asked.

The margin keeps a cycle whose pending work about fits (openb's default pod list asks for 98 % of the
GPUs: excess -2 % of C) on the per-task weights; the FGD paper's protocol asks for 130 % (+30 %).
"""

from __future__ import annotations

from loadmaster.core.snapshot import PENDING, ClusterSnapshot

# Oversubscribed when the pending GPU work exceeds the free GPUs by more than this percentage of the capacity.
OVERSUBSCRIBED_PERCENT = 10


def pending_gpu_excess(snapshot: ClusterSnapshot) -> int:
    """``D - G`` (milli-GPU): the Pending tasks' GPU requests beyond the cluster's free GPU."""
    state = snapshot.state
    pending = int(snapshot.task_request[snapshot.gpu_row][state.task_phase == PENDING].sum())
    free = int(state.devices.capacity.sum() - state.devices.used.sum())
    return pending - free


def gpu_oversubscribed(snapshot: ClusterSnapshot) -> bool:
    """``100 (D - G) > OVERSUBSCRIBED_PERCENT * C``, once per snapshot (the module docstring: it holds for
    the whole cycle)."""
    answer = snapshot.memo.get(("gpu_oversubscribed",))
    if answer is None:
        capacity = int(snapshot.state.devices.capacity.sum())
        answer = capacity > 0 and 100 * pending_gpu_excess(snapshot) > OVERSUBSCRIBED_PERCENT * capacity
        snapshot.memo[("gpu_oversubscribed",)] = answer
    return bool(answer)
