"""Filter ``runtime``: the node's image supports the task's components and features (the seeds'
"AMI compatibility"). Versions match PEP 440 specifier sets; a node that does not list a component the
task constrains is infeasible. Evaluated once per *distinct* node runtime, then spread over nodes."""

from __future__ import annotations

import numpy as np
from packaging.specifiers import SpecifierSet

from loadmaster.core.model import NodeRuntime, RuntimeRequirement
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


def runtime_problem(node: NodeRuntime | None, wanted: RuntimeRequirement) -> str | None:
    """Why a node runtime does not satisfy a requirement, or None if it does."""
    versions = dict(node.versions) if node else {}
    features = set(node.features) if node else set()
    for component, specifier in wanted.versions:
        if component not in versions:
            return f"node does not list runtime component {component}"
        if not SpecifierSet(specifier).contains(versions[component], prereleases=True):
            return f"runtime {component} {versions[component]} does not satisfy {specifier}"
    missing = [f for f in wanted.features if f not in features]
    return f"runtime lacks feature {', '.join(missing)}" if missing else None


class Runtime:
    name, category, dynamic = "runtime", Rejection.RUNTIME, False

    def applies(self, ctx: TaskContext) -> bool:
        return ctx.task.runtime is not None

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        snapshot, wanted = ctx.snapshot, ctx.task.runtime
        assert wanted is not None
        key = ("runtime", wanted)
        mask = snapshot.memo.get(key)
        if mask is None:
            verdict = {rt: runtime_problem(rt, wanted) is None for rt in {n.runtime for n in snapshot.nodes}}
            mask = np.array([verdict[node.runtime] for node in snapshot.nodes], dtype=np.bool_)
            snapshot.memo[key] = mask
        assert isinstance(mask, np.ndarray)
        return mask[cols]

    def explain(self, ctx: TaskContext, n: int) -> str:
        assert ctx.task.runtime is not None
        return runtime_problem(ctx.snapshot.nodes[n].runtime, ctx.task.runtime) or "runtime mismatch"
