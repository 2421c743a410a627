"""Running tasks that cannot sit on their node's GPU devices or volume pools as the file says are refused
with the task's YAML path (the loader checks node totals; the snapshot finds device-level conflicts)."""

from __future__ import annotations

import pytest

from loadmaster.scenario.schema import ScenarioError, parse_scenario
from loadmaster.scenario.simulate import simulate

DEVICES = """
name: devices
nodes:
  - name: node-0
    capacity: {gpu: 2}
jobs:
  - name: b
    tasks:
      - {name: b-0, request: {gpu: 0.6}, status: Running, node: node-0}
      - {name: b-1, request: {gpu: 0.6}, status: Running, node: node-0}
      - {name: b-2, request: {gpu: 0.6}, status: Running, node: node-0}
"""


def test_a_running_task_no_gpu_device_can_hold_is_refused_with_its_path() -> None:
    # 1.8 GPUs in all fit 2 devices' totals, but no device keeps 0.6 free once two tasks hold 0.6 each
    with pytest.raises(ScenarioError) as refused:
        simulate(parse_scenario(DEVICES))
    assert refused.value.path == "jobs[0].tasks[2]"
    assert "b-2" in refused.value.message and "node-0" in refused.value.message
