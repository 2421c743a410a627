"""After a middle or full collection the survivors are frozen, so later passes walk only newer
objects; a frozen heap that outgrew its bound (garbage cycles frozen in flight) is collected once."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from loadmaster.runtime.plane.process import heap
from loadmaster.runtime.plane.process.heap import (
    clean_up_if_grown,
    freeze_if_collected,
    older_collections,
    resident_bytes,
)


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the test session collects as usual


class Node:
    def __init__(self) -> None:
        self.partner: Node | None = None


@pytest.mark.usefixtures("unfrozen")
@pytest.mark.parametrize("generation", [1, 2])
def test_survivors_of_a_middle_or_full_collection_are_frozen(generation: int) -> None:
    kept = [{"replica": [index]} for index in range(1000)]
    seen = older_collections()
    gc.collect(generation)
    assert freeze_if_collected(seen) == seen + 1
    assert gc.get_freeze_count() >= len(kept)


@pytest.mark.usefixtures("unfrozen")
def test_nothing_is_frozen_after_a_young_collection_only() -> None:
    gc.collect()
    seen = older_collections()
    gc.collect(0)
    assert freeze_if_collected(seen) == seen
    assert gc.get_freeze_count() == 0


def _frozen_garbage_cycle() -> weakref.ref[Node]:
    first, second = Node(), Node()
    first.partner, second.partner = second, first
    gc.freeze()  # caught in flight by a freeze...
    return weakref.ref(first)  # ...and garbage from here on: only a collection of the frozen heap frees it


@pytest.mark.usefixtures("unfrozen")
def test_a_process_within_its_bound_keeps_its_frozen_heap() -> None:
    gc.collect()
    probe = _frozen_garbage_cycle()
    size = resident_bytes()
    assert clean_up_if_grown(size, size) == size
    assert clean_up_if_grown(size, int(size * heap.GROWTH_LIMIT)) == size
    assert probe() is not None


@pytest.mark.usefixtures("unfrozen")
def test_a_process_past_its_bound_collects_its_frozen_heap_once_and_freezes_it_again() -> None:
    gc.collect()
    probe = _frozen_garbage_cycle()
    kept = [[index] for index in range(1000)]
    gc.freeze()
    baseline = clean_up_if_grown(0, heap.GROWTH_SLACK + 1)
    assert probe() is None
    assert baseline > 0  # the size after the clean-up: the next bound is measured from there
    assert gc.get_freeze_count() >= len(kept)
