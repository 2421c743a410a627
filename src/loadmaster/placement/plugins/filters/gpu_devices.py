"""Filter ``gpu``: a compose-style GPU request (B9) runs only on nodes whose GPUs it accepts.

``gpus: all`` needs a node with GPUs; a device list also needs the node's GPU driver to be the one
named (a node that names no driver matches no named driver, as a node without ``gpu_model`` matches no
``gpu_models`` list) and every requested capability among the node's (``gpu`` always, plus the
declared ``gpu_capabilities``). Whether the devices are free is the ``capacity`` filter's business.
Static: one mask per distinct request, memoised on the snapshot.
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.model import GPU_CAPABILITY, GpuMatch, Node
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


def _accepts(node: Node, has_gpus: bool, match: GpuMatch | None) -> bool:
    if not has_gpus:
        return False
    if match is None:
        return True
    if match.driver is not None and node.gpu_driver != match.driver:
        return False
    return set(match.capabilities) <= {GPU_CAPABILITY, *node.gpu_capabilities}


class GpuDevices:
    name, category, dynamic = "gpu_devices", Rejection.GPU, False

    def applies(self, ctx: TaskContext) -> bool:
        task = ctx.task
        return ctx.gpu_all or (task.gpu_match is not None and ctx.gpu > 0)

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        snapshot, match = ctx.snapshot, ctx.task.gpu_match
        key = ("gpu_devices", match)
        mask = snapshot.memo.get(key)
        if mask is None:
            has_gpus = (snapshot.node_alloc[snapshot.gpu_row] > 0).tolist()
            mask = np.array(
                [_accepts(node, has, match) for node, has in zip(snapshot.nodes, has_gpus, strict=True)],
                dtype=np.bool_,
            )
            snapshot.memo[key] = mask
        assert isinstance(mask, np.ndarray)
        return mask[cols]

    def explain(self, ctx: TaskContext, n: int) -> str:
        snapshot, match = ctx.snapshot, ctx.task.gpu_match
        node = snapshot.nodes[n]
        if snapshot.node_alloc[snapshot.gpu_row, n] == 0:
            return "node has no gpus"
        assert match is not None  # only a device list can refuse a node with GPUs
        if match.driver is not None and node.gpu_driver != match.driver:
            have = f"gpu driver {node.gpu_driver}" if node.gpu_driver else "no gpu driver named"
            return f"{have} (wants {match.driver})"
        missing = [c for c in match.capabilities if c not in {GPU_CAPABILITY, *node.gpu_capabilities}]
        return f"gpus lack capabilities [{', '.join(missing)}]"
