"""Invariants of the deployment and job controllers over random stored states (hypothesis).

* convergence: applying a pass's changes and reconciling again asks for nothing more;
* the service ends with exactly ``replicas`` active replicas of the current spec;
* an index is never handed out twice, even across passes.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from loadmaster.controllers.changes import (
    Change,
    CreateJobReplicas,
    CreateServiceReplicas,
    DeleteReplica,
    TerminateReplica,
)
from loadmaster.controllers.deployment import DeploymentObserved, reconcile_deployment
from loadmaster.controllers.job import reconcile_job
from loadmaster.controllers.views import FAILED, LEAVING_PHASES, PENDING, RUNNING, TERMINATING, ReplicaView
from tests.controllers.views_builders import (
    HASH,
    NOW,
    OTHER_HASH,
    deployment,
    job,
    job_replica,
    replica,
    service,
)

PHASES = st.sampled_from([PENDING, RUNNING, FAILED, TERMINATING])


def apply_changes(world: dict[str, ReplicaView], changes: list[Change], desired_hash: str) -> dict[int, int]:
    """The store after the changes (what the runtime writes), and the counters they moved."""
    counters: dict[int, int] = {}
    for change in changes:
        if isinstance(change, CreateServiceReplicas):
            for index in change.indices:
                new = replica(index, spec_hash=desired_hash)
                assert new.name not in world, f"index {index} handed out twice"
                world[new.name] = new
            counters[0] = change.next_index
        elif isinstance(change, CreateJobReplicas):
            for index in change.indices:
                new = job_replica(index, spec_hash=desired_hash)
                assert new.name not in world
                world[new.name] = new
        elif isinstance(change, TerminateReplica):
            world[change.name] = replace(world[change.name], phase=TERMINATING)
        elif isinstance(change, DeleteReplica):
            del world[change.name]
    return counters


@st.composite
def stored_services(draw: st.DrawFn) -> tuple[list[ReplicaView], int]:
    indices = draw(st.lists(st.integers(0, 12), unique=True, max_size=8))
    replicas = []
    for index in indices:
        phase = draw(PHASES)
        node = None if phase == PENDING else "n1"
        replicas.append(
            replica(index, phase=phase, node=node, spec_hash=draw(st.sampled_from([HASH, OTHER_HASH])))
        )
    counter = draw(st.integers(0, 14))
    return replicas, counter


@given(stored_services(), st.integers(0, 8), st.sampled_from([HASH, OTHER_HASH]))
def test_the_deployment_controller_converges_in_one_pass_to_the_desired_replicas(
    stored: tuple[list[ReplicaView], int], wanted: int, desired_hash: str
) -> None:
    replicas, counter = stored
    desired = deployment(service(wanted, spec_hash=desired_hash))
    world = {r.name: r for r in replicas}
    seen_indices = {r.index for r in replicas}
    changes = reconcile_deployment("shop", desired, DeploymentObserved(replicas, {"api": counter}, []), NOW)
    moved = apply_changes(world, changes, desired_hash)
    new_indices = {r.index for r in world.values()} - seen_indices
    assert all(i is not None and i >= counter for i in new_indices), "a counter index went backwards"
    after = DeploymentObserved(list(world.values()), {"api": moved.get(0, counter)}, [])
    assert reconcile_deployment("shop", desired, after, NOW) == []
    active = [r for r in world.values() if r.phase not in LEAVING_PHASES]
    assert len(active) == wanted
    assert all(r.spec_hash == desired_hash for r in active)


@given(
    st.lists(st.tuples(st.integers(0, 9), PHASES, st.sampled_from([HASH, OTHER_HASH])), max_size=10),
    st.integers(1, 8),
)
def test_the_job_controller_converges_and_keeps_one_replica_per_task_index(
    stored: list[tuple[int, str, str]], tasks: int
) -> None:
    replicas = {}
    for index, phase, spec_hash in stored:
        replicas[index] = job_replica(
            index, phase=phase, node=None if phase == PENDING else "n1", spec_hash=spec_hash
        )
    world = {r.name: r for r in replicas.values()}
    desired = job(tasks)
    for _ in range(2):  # a stale Pending replica is deleted first, then created again
        apply_changes(world, reconcile_job("train", desired, list(world.values()), NOW), HASH)
    assert reconcile_job("train", desired, list(world.values()), NOW) == []
    indices = sorted(r.index for r in world.values() if r.index is not None and r.index < tasks)
    assert indices == list(range(tasks))
    assert all(r.phase in LEAVING_PHASES for r in world.values() if r.index is not None and r.index >= tasks)
