"""`loadmaster simulate` of a timeline file, as a user runs it: a real process, JSON alone on stdout, the exit
codes of the scenario format (0 ok, 1 expect failed with --check, 2 bad input naming the path)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

TIMELINE = {
    "name": "one-node-runs-one-replica",
    "nodes": [{"name": "n1", "capacity": {"cpu": 2, "memory": "4Gi"}}],
    "resources": [
        {
            "api_version": "loadmaster/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"services": [{"name": "api", "image": "web:1", "replicas": 1}]},
        }
    ],
    "timeline": [{"at": "2s", "expect": {"replicas": {"web-api-0": {"phase": "Running", "node": "n1"}}}}],
}


def simulate(tmp_path: Path, document: object, *options: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "timeline.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    command = [sys.executable, "-m", "loadmaster", "simulate", str(path), *options]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_a_timeline_prints_only_its_json_on_stdout_and_exits_0(tmp_path: Path) -> None:
    done = simulate(tmp_path, TIMELINE, "--check")
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert output["timeline"] == "one-node-runs-one-replica"
    assert output["expect"] == {"passed": True, "mismatches": []}
    assert output["steps"][0]["observed"]["replicas"]["web-api-0"]["phase"] == "Running"


def test_a_failed_expect_exits_1_with_check_and_0_without(tmp_path: Path) -> None:
    wrong = {**TIMELINE, "timeline": [{"at": "2s", "expect": {"replicas": {"web-api-0": {"node": "n9"}}}}]}
    assert simulate(tmp_path, wrong).returncode == 0
    done = simulate(tmp_path, wrong, "--check")
    assert done.returncode == 1
    assert json.loads(done.stdout)["expect"]["mismatches"] == [
        "timeline[0]: replicas.web-api-0.node: expected n9, got n1"
    ]


def test_a_bad_file_exits_2_naming_the_path(tmp_path: Path) -> None:
    bad = {**TIMELINE, "timeline": [{"at": "2s", "do": {"node_down": 7}}]}
    done = simulate(tmp_path, bad)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "timeline[0].do.node_down" in done.stderr


def test_a_step_naming_a_node_that_does_not_exist_exits_2(tmp_path: Path) -> None:
    bad = {**TIMELINE, "timeline": [{"at": "2s", "do": {"node_down": "n9"}}]}
    done = simulate(tmp_path, bad)
    assert done.returncode == 2
    assert 'timeline[0].do.node_down: unknown node "n9"' in done.stderr


def test_explain_prints_one_line_per_event_and_the_verdict(tmp_path: Path) -> None:
    done = simulate(tmp_path, TIMELINE, "--explain")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "timeline one-node-runs-one-replica"
    assert any("n1" in line and "registered nodes/n1" in line for line in lines)
    assert any(line.split()[:3] == ["2s", "expect", "passed"] for line in lines)
    assert lines[-1] == "every expect held"
