"""Scenario files meet the same bounds as manifests: a number beyond them is exit 2 naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from loadmaster.cli.main import app
from loadmaster.core.limits import MAX_CPU_CORES, MAX_INTEGER
from loadmaster.scenario.schema import ScenarioError, parse_scenario
from loadmaster.scenario.simulate import simulate

SCENARIO = """
name: bounds
nodes:
  - name: node-0
    capacity: {{cpu: {cpu}, memory: 8Gi}}
jobs:
  - name: j
    priority: {priority}
    tasks:
      - {{name: j-0, request: {{cpu: {request}}}}}
"""


@pytest.mark.parametrize(
    ("fields", "path", "words"),
    [
        pytest.param(
            {"cpu": '"1e30"'}, "nodes[0].capacity.cpu", "limit of 1000000 cores", id="capacity-1e30"
        ),
        pytest.param({"request": "1e30"}, "jobs[0].tasks[0].request.cpu", "limit", id="request-1e30"),
        pytest.param(
            {"priority": str(10**30)}, "jobs[0].priority", f"at most {MAX_INTEGER}", id="priority-1e30"
        ),
    ],
)
def test_a_scenario_number_beyond_the_bounds_is_refused_naming_the_field(
    fields: dict[str, str], path: str, words: str
) -> None:
    text = SCENARIO.format(**{"cpu": "4", "priority": "0", "request": "1", **fields})
    with pytest.raises(ScenarioError) as refused:
        parse_scenario(text)
    assert refused.value.path == path
    assert words in refused.value.message


def test_simulate_exits_2_naming_the_field_for_a_cpu_of_1e30(tmp_path: Path) -> None:
    scenario = tmp_path / "huge.yaml"
    scenario.write_text(SCENARIO.format(cpu='"1e30"', priority=0, request=1))
    result = CliRunner().invoke(app, ["simulate", str(scenario)])
    assert result.exit_code == 2, result.output
    assert "nodes[0].capacity.cpu" in result.output and "above the limit" in result.output


def test_a_duplicate_key_in_a_scenario_is_refused_naming_its_path() -> None:
    text = SCENARIO.format(cpu="4", priority=0, request=1).replace("memory: 8Gi", "memory: 8Gi, cpu: 2")
    with pytest.raises(ScenarioError) as refused:
        parse_scenario(text)
    assert refused.value.path == "nodes[0].capacity.cpu"
    assert 'the key "cpu" is given twice' in refused.value.message


@given(
    cpu=st.one_of(
        st.integers(min_value=MAX_CPU_CORES - 2, max_value=MAX_CPU_CORES + 2),
        st.integers(min_value=0, max_value=10**40),
        st.floats(min_value=0, max_value=1e300, allow_nan=False),
    ),
    request=st.one_of(st.integers(min_value=0, max_value=10**40), st.floats(min_value=0, max_value=1e40)),
    priority=st.integers(min_value=-(10**20), max_value=10**20),
)
@settings(max_examples=60)
def test_random_numbers_near_and_beyond_the_bounds_are_simulated_or_refused_naming_the_field(
    cpu: float, request: float, priority: int
) -> None:
    text = SCENARIO.format(cpu=repr(cpu), priority=priority, request=repr(request))
    within = cpu <= MAX_CPU_CORES and request <= MAX_CPU_CORES and abs(priority) <= MAX_INTEGER
    try:
        plan, _ = simulate(parse_scenario(text))
    except ScenarioError as refused:
        assert not within, refused
        assert refused.path in (
            "nodes[0].capacity.cpu",
            "jobs[0].tasks[0].request.cpu",
            "jobs[0].priority",
        )
        return
    assert within
    assert "j-0" in plan.tasks
