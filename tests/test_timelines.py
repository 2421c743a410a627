"""The timeline table: every tests/timelines/**.yaml runs the control plane over virtual time and must meet
every `expect` it has."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadmaster.scenario.schema import load_document
from loadmaster.timeline.harness import run_timeline
from loadmaster.timeline.schema import build_timeline

TIMELINES = sorted((Path(__file__).parent / "timelines").rglob("*.yaml"))


def test_there_are_timeline_files_for_the_rules_built_so_far() -> None:
    assert len(TIMELINES) >= 10


@pytest.mark.parametrize("path", TIMELINES, ids=[p.stem for p in TIMELINES])
def test_timeline_meets_every_expectation(path: Path) -> None:
    timeline = build_timeline(load_document(path))
    assert timeline.name == path.stem
    assert any(step.expect is not None for step in timeline.steps), f"{path.name} expects nothing"
    output = run_timeline(timeline)
    assert output["errors"] == [] or "refused" in path.stem, output["errors"]
    assert output["expect"]["mismatches"] == []
