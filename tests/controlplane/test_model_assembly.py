"""The scheduling model keeps a cycle's cluster assembled between cycles; what it builds must always equal
what a model built from scratch on the same cache builds (jobs in order, nodes and their states,
replicas, attempted and blocked), whatever happened in between."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.manifests import JOB, NODE, REPLICA, parse_manifests
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.errors import WriteConflictError
from loadmaster.runtime.plane.leadership.leader_local import LocalLeaderElector
from loadmaster.runtime.requests.writes.object_writes import apply_manifests, delete_object
from loadmaster.runtime.requests.writes.status_writes import heartbeat, register_node, report_replica_status
from loadmaster.runtime.scheduling.model.scheduling_model import ClusterBuild, SchedulingModel
from loadmaster.store.memory import MemoryStore
from loadmaster.testing.fake_clock import FakeClock

NODES = ["n1", "n2", "n3"]
JOBS = ["a", "b", "c", "d"]


def job(name: str, tasks: int, queue: str) -> str:
    return f"""
api_version: loadmaster/v1
kind: Job
metadata: {{name: {name}}}
spec: {{tasks: {tasks}, queue: {queue}, command: ["true"], resources: {{cpu: 1, memory: 64Mi}}}}
"""


def queue(name: str) -> str:
    return f"api_version: loadmaster/v1\nkind: Queue\nmetadata: {{name: {name}}}\nspec: {{}}\n"


operations = st.one_of(
    st.tuples(st.just("register"), st.sampled_from(NODES)),
    st.tuples(st.just("heartbeat"), st.sampled_from(NODES)),
    st.tuples(st.just("delete_node"), st.sampled_from(NODES)),
    st.tuples(st.just("apply"), st.sampled_from(JOBS), st.integers(1, 3), st.sampled_from(["default", "q"])),
    st.tuples(st.just("delete_job"), st.sampled_from(JOBS)),
    st.tuples(st.just("queue"), st.just("q")),
    st.tuples(st.just("advance"), st.sampled_from([1, 40, 95])),
    st.tuples(st.just("cycle"), st.just("")),
    st.tuples(st.just("report"), st.integers(0, 20), st.sampled_from(["Running", "Terminated", "Failed"])),
)


def summary(build: ClusterBuild) -> dict[str, Any]:
    cluster = build.cluster
    return {
        "jobs": [(j.name, j.queue, [(t.name, t.status, t.node) for t in j.tasks]) for j in cluster.jobs],
        "nodes": [(node.name, node.state) for node in cluster.nodes],
        "queues": [q.name for q in cluster.queues],
        "replicas": sorted(build.replicas),
        "attempted": [r.name for r in build.attempted],
        "blocked": [(b.replica.name, b.reason) for b in build.blocked],
        "build_nodes": list(build.nodes),
    }


async def run(ops: list[tuple[Any, ...]]) -> None:
    store = MemoryStore()
    clock = FakeClock()
    plane = ControlPlane(store, LocalLeaderElector(store, "test"), backend="memory", clock=clock)
    await plane.start(run_loops=False)
    assert plane.scheduler is not None and plane.controllers is not None
    try:
        for op in ops:
            kind = op[0]
            if kind == "register":
                await register_node(plane, {"name": op[1], "capacity": {"cpu": "4", "memory": "8Gi"}}, "a")
            elif kind == "heartbeat" and op[1] in plane.cache.objects[NODE]:
                await heartbeat(plane, op[1], {})
            elif kind == "delete_node" and op[1] in plane.cache.objects[NODE]:
                await delete_object(plane, NODE, op[1], "admin")
            elif kind == "apply":
                await apply_manifests(plane, parse_manifests(job(op[1], op[2], op[3])), "user")
            elif kind == "delete_job" and op[1] in plane.cache.objects[JOB]:
                await delete_object(plane, JOB, op[1], "user")
            elif kind == "queue":
                await apply_manifests(plane, parse_manifests(queue(op[1])), "user")
            elif kind == "report":
                placed = sorted(
                    name
                    for name, c in plane.cache.objects[REPLICA].items()
                    if c.obj.get("status", {}).get("node_ref")
                )
                if placed:
                    with contextlib.suppress(WriteConflictError):  # a transition the agent may not report
                        await report_replica_status(plane, placed[op[1] % len(placed)], {"phase": op[2]})
            elif kind == "advance":
                clock.advance(op[1])
            elif kind == "cycle":
                await plane.cache.wait_for(await store.revision())
                await plane.controllers.reconcile_once()
                await plane.cache.wait_for(await store.revision())
                await plane.scheduler.reconcile_once(force=True)
            await plane.cache.wait_for(await store.revision())
            kept = plane.scheduler.model.build(clock.now())
            fresh = SchedulingModel(plane.cache)
            try:
                assert summary(kept) == summary(fresh.build(clock.now())), op
            finally:
                fresh.close()
    finally:
        await plane.close()
        await store.close()


@settings(max_examples=60)
@given(st.lists(operations, min_size=1, max_size=25))
def test_the_kept_assembly_equals_a_build_from_scratch(ops: list[tuple[Any, ...]]) -> None:
    asyncio.run(run(ops))
