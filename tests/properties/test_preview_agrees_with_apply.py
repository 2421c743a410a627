"""Preview says what an apply does: over random small clusters (nodes, running work of three queues, and
one manifest: a Job's gang, a spread, pack or global service, or a change to a running deployment), the
preview of the manifest and then its apply and one scheduler cycle on a real control plane (memory
store, fake clock) agree on every replica's node (or Pending) and on the running replicas evicted
and moved.

The preview's one assumption is that no other Pending replica is placed first: the generated running
work is all placed and Running before the manifest is previewed (an example whose running work does not
fit, or is being moved, which waits for agents this test has not, is rejected). ``event``s show how
often the examples evict, move and leave replicas Pending (``--hypothesis-show-statistics``)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import assume, event, example, given, settings
from hypothesis import strategies as st

from loadmaster.manifests import REPLICA, parse_manifests
from loadmaster.manifests.replicas import replacement_name
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.leadership.leader_local import LocalLeaderElector
from loadmaster.runtime.requests.writes.status_writes import heartbeat, report_replica_status
from loadmaster.runtime.scheduling.preview.preview import evaluate_preview, prepare_preview
from loadmaster.store.memory import MemoryStore
from loadmaster.testing.fake_clock import FakeClock
from tests.controlplane.conftest import add_nodes, apply

QUEUES = """
api_version: loadmaster/v1
kind: Queue
metadata: {name: team-a}
spec: {deserved: {cpu: "6"}}
---
api_version: loadmaster/v1
kind: Queue
metadata: {name: team-b}
spec: {deserved: {cpu: "2"}}
"""
QUEUE_NAMES = ("default", "team-a", "team-b")
# Running work is mostly preemptible (below 100); the manifest often outranks it.
RUNNING_PRIORITIES = (10, 10, 50, 120)
NEW_PRIORITIES = (10, 50, 90, 90, 120)
# Past every voluntary-move cooldown of a just placed replica: consolidation may move running work.
SETTLED_FOR_S = 3600.0
SETTLE_ROUNDS = 4


@dataclass(frozen=True)
class Workload:
    kind: str  # job | spread | pack | global
    name: str
    count: int
    cpu: int
    queue: str
    priority: int
    ports: bool = False
    zone: str | None = None
    min_available: int = 1
    image: str = "x:1"
    preemptible: bool | None = None  # None: the default (a Job below priority 100; a service never)

    def manifest(self) -> str:
        fields = (
            f'queue: {self.queue}, priority: {self.priority}, resources: {{cpu: "{self.cpu}", memory: 64Mi}}'
            + (", ports: [80]" if self.ports else "")
            + (f", node_selector: {{zone: {self.zone}}}" if self.zone else "")
            + (f", preemptible: {str(self.preemptible).lower()}" if self.preemptible is not None else "")
        )
        if self.kind == "job":
            return (
                f"api_version: loadmaster/v1\nkind: Job\nmetadata: {{name: {self.name}}}\n"
                f"spec: {{tasks: {self.count}, min_available: {self.min_available}, command: [x], "
                f"{fields}}}\n"
            )
        size = "" if self.kind == "global" else f"replicas: {self.count}, "
        return (
            f"api_version: loadmaster/v1\nkind: Deployment\nmetadata: {{name: {self.name}}}\nspec:\n"
            f"  services:\n    - {{name: api, image: '{self.image}', placement: {self.kind}, "
            f"{size}{fields}}}\n"
        )


@dataclass(frozen=True)
class Case:
    nodes: tuple[tuple[int, str], ...]  # (cpu, zone) of n0, n1, ...
    running: tuple[Workload, ...]
    manifest: Workload


def workloads(
    name: str,
    kinds: tuple[str, ...],
    max_cpu: int,
    max_count: int,
    priorities: tuple[int, ...],
    zones: bool = True,
) -> st.SearchStrategy[Workload]:
    @st.composite
    def one(draw: st.DrawFn) -> Workload:
        kind = draw(st.sampled_from(kinds))
        count = draw(st.integers(1, max_count))
        return Workload(
            kind=kind,
            name=name,
            count=count,
            cpu=draw(st.integers(1, max_cpu)),
            queue=draw(st.sampled_from(QUEUE_NAMES)),
            priority=draw(st.sampled_from(priorities)),
            ports=kind != "job" and draw(st.integers(0, 3)) == 0,
            zone=draw(st.sampled_from((None, None, "a", "b"))) if zones else None,
            min_available=draw(st.integers(1, count)),
            preemptible=draw(st.sampled_from((None, None, True))),
        )

    return one()


@st.composite
def cases(draw: st.DrawFn) -> Case:
    nodes = tuple(
        (draw(st.sampled_from((2, 4, 8))), draw(st.sampled_from(("a", "b"))))
        for _ in range(draw(st.integers(1, 3)))
    )
    kinds = ("job", "job", "spread", "pack", "global")
    running = tuple(
        draw(workloads(f"w{i}", kinds, max_cpu=2, max_count=3, priorities=RUNNING_PRIORITIES, zones=False))
        for i in range(draw(st.integers(0, 4)))
    )
    services = [w for w in running if w.kind in ("spread", "pack")]
    if services and draw(st.booleans()):  # a change to a running deployment: new image, new size
        old = draw(st.sampled_from(services))
        manifest = Workload(**{
            **old.__dict__,
            "image": draw(st.sampled_from(("x:1", "x:2"))),
            "count": draw(st.integers(1, 3)),
            "cpu": draw(st.integers(1, 3)),
        })  # fmt: skip
    else:
        kinds = ("job", "spread", "pack", "global")
        manifest = draw(workloads("new", kinds, max_cpu=4, max_count=3, priorities=NEW_PRIORITIES))
        if running and draw(st.booleans()):  # outranks running work of its own queue: preempt's case
            queue = draw(st.sampled_from([w.queue for w in running]))
            manifest = Workload(**{**manifest.__dict__, "queue": queue, "priority": 90, "preemptible": True})
    return Case(nodes, running, manifest)


def _phase_condition(obj: dict[str, Any]) -> dict[str, Any]:
    return next((c for c in obj["status"].get("conditions", []) if c["type"] == "Phase"), {})


def _where(obj: dict[str, Any]) -> str | None:
    """The node a replica is bound or pipelined to after the cycle, else None (Pending)."""
    if obj["status"].get("phase") in ("Scheduled", "Running"):
        return str(obj["status"]["node_ref"])
    condition = _phase_condition(obj)
    if condition.get("reason") == "Pipelined":
        return str(condition["details"]["node"])
    return None


def _replicas(plane: ControlPlane) -> dict[str, dict[str, Any]]:
    return {name: cached.obj for name, cached in plane.cache.objects[REPLICA].items()}


async def _caught_up(plane: ControlPlane) -> None:
    await plane.cache.wait_for(await plane.store.revision())


async def _all_running(plane: ControlPlane) -> bool:
    """Place the running work as the loops would, reporting each placed replica Running (its agent);
    False when some of it stays Pending or is being moved (a move waits for agents that are not here)."""
    assert plane.controllers is not None and plane.scheduler is not None
    for _ in range(SETTLE_ROUNDS):
        await _caught_up(plane)
        await plane.controllers.reconcile_once(full=True)
        await _caught_up(plane)
        await plane.scheduler.reconcile_once()
        await _caught_up(plane)
        for name, obj in _replicas(plane).items():
            if obj["status"].get("phase") == "Scheduled":
                await report_replica_status(plane, name, {"phase": "Running"})
        await _caught_up(plane)
        phases = {obj["status"].get("phase") for obj in _replicas(plane).values()}
        if phases <= {"Running"}:
            return not any(spec_replaces(obj) for obj in _replicas(plane).values())
    return False


def spec_replaces(obj: dict[str, Any]) -> bool:
    return bool(obj.get("spec", {}).get("replaces"))


async def _preview_then_apply(case: Case) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(what preview said, what the apply did), each as {placements, victims, moves}; None when the
    running work did not all fit."""
    store = MemoryStore()
    clock = FakeClock()
    plane = ControlPlane(store, LocalLeaderElector(store, "test-server"), backend="memory", clock=clock)
    await plane.start(run_loops=False)
    try:
        for i, (cpu, zone) in enumerate(case.nodes):
            await add_nodes(plane, f"n{i}", cpu=str(cpu), labels={"zone": zone})
        await apply(plane, QUEUES)
        for workload in case.running:
            await apply(plane, workload.manifest())
        if not await _all_running(plane):
            return None
        clock.advance(SETTLED_FOR_S)
        for i in range(len(case.nodes)):  # the agents' heartbeats: the nodes stay Ready
            await heartbeat(plane, f"n{i}", {})
        await _caught_up(plane)
        placed = _replicas(plane)

        manifests = parse_manifests(case.manifest.manifest())
        assert plane.model is not None and plane.rebalancer is not None
        now = clock.now()
        ledger = plane.rebalancer.ledger.view(now.timestamp())
        result = evaluate_preview(
            prepare_preview(manifests, plane.model, plane.cache, now, ledger), now.timestamp()
        )
        said = {
            "placements": {item["replica"]: item["node"] for item in result["items"]},
            "victims": sorted(victim["replica"] for victim in result["victims"]),
            "moves": sorted((move["replica"], move["to"]) for move in result["moves"]),
        }

        await apply(plane, case.manifest.manifest())
        await _caught_up(plane)
        assert plane.controllers is not None and plane.scheduler is not None
        await plane.controllers.reconcile_once(full=True)
        await _caught_up(plane)
        await plane.scheduler.reconcile_once()
        await _caught_up(plane)
        after = _replicas(plane)
        evicted = [
            name
            for name in placed
            if after[name]["status"]["phase"] == "Terminating"
            and _phase_condition(after[name]).get("reason") == "Evicted"
        ]
        moved = [
            (name, _where(after[replacement_name(name)]))
            for name in placed
            if replacement_name(name) in after and replacement_name(name) not in said["placements"]
        ]
        done = {
            "placements": {
                name: _where(after[name]) if name in after else "absent" for name in said["placements"]
            },
            "victims": sorted(evicted),
            "moves": sorted(moved),
        }
        return said, done
    finally:
        await plane.close()
        await store.close()


def _rolled_service_moved_aside() -> Case:
    """Found by this test: the preview listed the service's replicas staying-first, the scheduling
    model oldest-first, and consolidation moved a different replica aside for the rolled one."""
    running = Workload("spread", "w0", 2, 1, "default", 10, True, None, 1, "x:1", True)
    return Case(nodes=((2, "a"), (4, "a"), (2, "a")), running=(running,), manifest=replace(running, cpu=3))


def _changed_owner_keeps_its_place() -> Case:
    """Found by this test: the preview put a changed deployment's jobs after every other job, the
    scheduling model keeps them at the owner's age, and consolidation moved another owner's replica."""
    w1 = Workload("spread", "w1", 2, 1, "default", 10, False, None, 1, "x:1", True)
    running = (
        Workload("spread", "w0", 3, 1, "default", 10, True, None, 1, "x:1", None),
        w1,
        Workload("spread", "w2", 3, 2, "default", 10, False, None, 1, "x:1", None),
        Workload("spread", "w3", 3, 2, "default", 10, False, None, 1, "x:1", True),
    )
    return Case(nodes=((8, "a"), (8, "a"), (8, "a")), running=running, manifest=replace(w1, count=3, cpu=3))


@settings(max_examples=200)
@given(cases())
@example(_rolled_service_moved_aside())
@example(_changed_owner_keeps_its_place())
def test_preview_and_apply_place_evict_and_move_the_same_replicas(case: Case) -> None:
    outcome = asyncio.run(_preview_then_apply(case))
    assume(outcome is not None)
    assert outcome is not None
    said, done = outcome
    event(f"manifest: {case.manifest.kind}" + (" (a change)" if case.manifest.name != "new" else ""))
    event("evicts" if said["victims"] else "evicts nothing")
    event("moves" if said["moves"] else "moves nothing")
    event("leaves a replica Pending" if None in said["placements"].values() else "places every replica")
    assert said == done
