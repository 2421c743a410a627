"""The main table of cases: every tests/scenarios/**.yaml runs one cycle and must meet its `expect`."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadmaster.scenario.schema import load_scenario
from loadmaster.scenario.simulate import simulate

SCENARIOS = sorted((Path(__file__).parent / "scenarios").rglob("*.yaml"))


def test_there_are_scenario_files_for_every_kind_of_case() -> None:
    assert len(SCENARIOS) >= 40


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_meets_its_expectation(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.expect, f"{path.name} has no expect block"
    _, output = simulate(scenario)
    assert output["expect"]["mismatches"] == []


@pytest.mark.parametrize("path", SCENARIOS[:10], ids=[p.stem for p in SCENARIOS[:10]])
def test_scenario_name_matches_its_file_name(path: Path) -> None:
    assert load_scenario(path).name == path.stem
