"""Scenario files that must be refused: every tests/scenarios_refused/*.yaml starts with a comment
``# refused: <path>: <message>``, the exact error ``loadmaster simulate`` reports for it (exit status 2).
They are the bad-input half of the scenario table: a bug report about a refusal becomes such a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadmaster.scenario.schema import ScenarioError, load_scenario
from loadmaster.scenario.simulate import simulate

REFUSED = sorted((Path(__file__).parent / "scenarios_refused").glob("*.yaml"))
_MARK = "# refused: "


def test_there_are_refused_scenario_files() -> None:
    assert REFUSED


@pytest.mark.parametrize("path", REFUSED, ids=[p.stem for p in REFUSED])
def test_a_refused_scenario_file_is_refused_with_the_error_it_states(path: Path) -> None:
    first_line = path.read_text().splitlines()[0]
    assert first_line.startswith(_MARK), f"{path.name} does not start with {_MARK!r}"
    with pytest.raises(ScenarioError) as error:
        simulate(load_scenario(path))
    assert str(error.value) == first_line.removeprefix(_MARK)
