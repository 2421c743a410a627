"""The slot index (controllers/deployments/service_slots.py) answers every question the rollout asks
exactly as a walk over the replicas does, after any sequence of replicas added, changed and removed
(hypothesis)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from loadmaster.controllers.deployments.deployment_rollout import IndexedSlots
from loadmaster.controllers.deployments.rollout import Replacement, Slot, SlotTuple
from loadmaster.controllers.deployments.service_slots import DeploymentSlots
from loadmaster.controllers.views import FAILED, PENDING, RUNNING, TERMINATING, ReplicaView
from tests.controllers.views_builders import HASH, OTHER_HASH, replica

HASHES = st.sampled_from([HASH, OTHER_HASH])
PHASES = st.sampled_from([PENDING, RUNNING, FAILED, TERMINATING])
EDITS = st.lists(
    st.tuples(st.integers(0, 9), st.booleans(), PHASES, HASHES, st.booleans(), st.integers(1, 3)),
    min_size=1,
    max_size=40,
)


def _walk(world: dict[str, ReplicaView], wanted: int) -> SlotTuple:
    """The plain answer: the first ``wanted`` active replicas by index, with their replacements."""
    active = sorted(
        (r for r in world.values() if r.replaces is None and not r.is_leaving and r.index is not None),
        key=lambda r: r.index or 0,
    )[:wanted]
    slots = []
    for r in active:
        flight = world.get(f"{r.name}.next")
        if flight is not None and flight.is_leaving:
            flight = None  # a replacement going away is in flight no more
        replacement = Replacement(flight.spec_hash, flight.phase, flight.healthy) if flight else None
        slots.append(Slot(r.name, r.index or 0, r.spec_hash, r.phase, r.healthy, replacement))
    return SlotTuple(tuple(slots))


@given(EDITS, st.integers(0, 10), HASHES)
def test_the_index_answers_like_a_walk_over_the_replicas(
    edits: list[tuple[int, bool, str, str, bool, int]], wanted: int, target: str
) -> None:
    world: dict[str, ReplicaView] = {}
    index = DeploymentSlots()
    for number, present, phase, spec_hash, is_replacement, revision in edits:
        # A new revision in the same place (a status write) only swaps the view in (service_slots.py).
        base = replica(number, phase=phase, node="n1", spec_hash=spec_hash, revision=revision)
        view = replace(base, name=f"{base.name}.next", replaces=base.name) if is_replacement else base
        if present:
            world[view.name] = view
            index.put(view)
        else:
            world.pop(view.name, None)
            index.drop(view.name)
    walked = _walk(world, wanted)
    fast = IndexedSlots(index.service("api"), index.views, wanted)
    assert len(fast) == len(walked)
    assert fast.lowest_stale(target) == walked.lowest_stale(target)
    # Two answers are over every active replica (one above ``wanted``, about to be scaled down, too).
    everyone = _walk(world, 10**6)
    assert fast.any_not_running(target) == everyone.any_not_running(target)
    assert [s.name for s in fast.busy()] == sorted(s.name for s in everyone.busy())
    for slot in walked.slots:
        assert fast.find(slot.name) == slot
        assert fast.position(slot.index) == walked.position(slot.index)
    # Every view held is the latest one put for its name, wherever it is filed.
    assert index.views == world
    assert all(view is world[view.name] for view in index.service("api").every())
    assert len(index.service("api").every()) == len(world)
    indexed = [r.index for r in world.values() if r.index is not None]
    assert index.service("api").highest_recorded() == max(indexed, default=-1)
