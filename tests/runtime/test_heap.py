"""After a full collection the survivors are frozen, so the next full pass walks only newer objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from loadmaster.runtime.plane.process.heap import freeze_if_collected, full_collections


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the test session collects as usual


@pytest.mark.usefixtures("unfrozen")
def test_survivors_of_a_full_collection_are_frozen() -> None:
    kept = [{"replica": index} for index in range(1000)]
    seen = full_collections()
    gc.collect()
    assert freeze_if_collected(seen) == seen + 1
    assert gc.get_freeze_count() >= len(kept)


@pytest.mark.usefixtures("unfrozen")
def test_nothing_is_frozen_without_a_full_collection() -> None:
    gc.collect()
    seen = full_collections()
    gc.collect(1)  # a younger generation only
    assert freeze_if_collected(seen) == seen
    assert gc.get_freeze_count() == 0
