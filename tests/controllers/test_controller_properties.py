"""Invariants of the deployment and job controllers over random stored states (hypothesis).

* convergence: applying a pass's changes and reconciling again asks for nothing more (for a deployment,
  once its replacements have run: replicas of another spec are replaced make-before-break, one pass per
  step, with the replacement rule of ``controllers/replacement.py`` completing each);
* the service ends with exactly ``replicas`` active replicas of the current spec;
* an index is never handed out twice, even across passes; at most one replacement is in flight.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from loadmaster.controllers.changes import (
    AbortReplacement,
    Change,
    CompleteReplacement,
    CreateJobReplicas,
    CreateServiceReplicas,
    DeleteReplica,
    StartReplacement,
    TerminateReplica,
)
from loadmaster.controllers.deployments.deployment import DeploymentObserved, reconcile_deployment
from loadmaster.controllers.job import reconcile_job
from loadmaster.controllers.replacement import reconcile_replacements
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
        elif isinstance(change, StartReplacement):
            # The agents start it at once (Running and healthy), as the simulated ones do.
            old = world[change.replica]
            spec_hash = change.spec_hash or old.spec_hash
            new = replace(old, name=f"{old.name}.next", spec_hash=spec_hash, phase=RUNNING, replaces=old.name)
            assert new.name not in world, f"a second replacement of {old.name}"
            world[new.name] = new
        elif isinstance(change, AbortReplacement):
            del world[f"{change.replica}.next"]
        elif isinstance(change, CompleteReplacement):
            new = world.pop(f"{change.replica}.next")
            world[change.replica] = replace(new, name=change.replica, replaces=None)
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
def test_the_deployment_controller_converges_to_the_desired_replicas(
    stored: tuple[list[ReplicaView], int], wanted: int, desired_hash: str
) -> None:
    replicas, counter = stored
    desired = deployment(service(wanted, spec_hash=desired_hash))
    world = {r.name: r for r in replicas}
    seen_indices = {r.index for r in replicas}
    for _ in range(3 * 8 + 3):  # a pass to start each replacement, one to complete it, and the scale
        observed = DeploymentObserved(list(world.values()), {"api": counter}, [])
        changes = reconcile_deployment("shop", desired, observed, NOW)
        replacements = [r for r in world.values() if r.replaces is not None]
        changes += reconcile_replacements(replacements, world, NOW)
        if not changes:
            break
        counter = apply_changes(world, changes, desired_hash).get(0, counter)
        assert sum(r.replaces is not None for r in world.values()) <= 1, "two replacements in flight"
    else:
        raise AssertionError("the deployment controller did not converge")
    new_indices = {r.index for r in world.values()} - seen_indices
    assert all(i is not None and i >= stored[1] for i in new_indices), "a counter index went backwards"
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
