"""deploy/: the Grafana dashboard asks only for metrics the server exports, and the systemd unit and the
Dockerfile start ``loadmaster server`` with options it has (checked with systemd-analyze where it exists)."""

from __future__ import annotations

import configparser
import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from loadmaster.cli.main import app
from loadmaster.runtime.plane.metrics import ControlPlaneMetrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
METRIC = re.compile(r"\bloadmaster_[a-z_]+\b")
SAMPLE_SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created")}
DOCKER_INSTRUCTIONS = {
    "FROM", "RUN", "COPY", "ADD", "USER", "WORKDIR", "VOLUME", "EXPOSE", "ENTRYPOINT", "CMD", "HEALTHCHECK",
    "ENV", "ARG", "LABEL", "STOPSIGNAL", "SHELL", "ONBUILD",
}  # fmt: skip


def exported_series() -> set[str]:
    """Every series name the server's registry can expose (counters as _total, histograms' parts)."""
    names = set()
    for family in ControlPlaneMetrics().registry.collect():
        suffixes = SAMPLE_SUFFIXES.get(family.type, ("",))
        names.update(family.name + suffix for suffix in suffixes)
    return names


def server_options() -> set[str]:
    result = CliRunner().invoke(app, ["server", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    return set(re.findall(r"--[a-z][a-z-]+", result.stdout))


def test_every_dashboard_query_names_only_metrics_the_server_exports() -> None:
    dashboard = json.loads((DEPLOY / "grafana-dashboard.json").read_text())
    exported = exported_series()
    asked = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in METRIC.findall(target["expr"])
    }
    assert asked, "the dashboard queries nothing"
    assert asked <= exported, f"not exported: {sorted(asked - exported)}"
    assert "loadmaster_queue_dominant_share" in asked and "loadmaster_queue_fair_share" in asked
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])


def test_the_dashboard_check_would_catch_a_metric_that_does_not_exist() -> None:
    assert "loadmaster_queue_allocated" in exported_series()
    assert "loadmaster_queue_happiness" not in exported_series()


def test_the_systemd_unit_starts_the_server_with_options_it_has() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    unit.read(DEPLOY / "loadmaster.service")
    assert set(unit.sections()) == {"Unit", "Service", "Install"}
    command = shlex.split(unit["Service"]["ExecStart"])
    assert command[0].startswith("/") and command[0].endswith("/loadmaster")  # systemd wants a path
    assert command[1] == "server"
    assert {word for word in command if word.startswith("--")} <= server_options()
    assert unit["Service"]["KillSignal"] == "SIGTERM"
    if shutil.which("systemd-analyze"):
        done = subprocess.run(
            ["systemd-analyze", "verify", str(DEPLOY / "loadmaster.service")],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        # the binary itself is not installed on a test machine; anything else about the unit is a problem
        problems = [
            line
            for line in done.stderr.splitlines()
            if "loadmaster.service" in line and "is not executable" not in line
        ]
        assert not problems, done.stderr


def test_the_dockerfile_has_known_instructions_and_runs_the_server_with_options_it_has() -> None:
    lines = [
        line for line in (DEPLOY / "Dockerfile").read_text().splitlines() if line and not line.startswith("#")
    ]
    instructions = [line.split()[0] for line in lines]
    assert set(instructions) <= DOCKER_INSTRUCTIONS, set(instructions) - DOCKER_INSTRUCTIONS
    assert instructions[0] == "FROM"
    entrypoint = json.loads(next(line for line in lines if line.startswith("ENTRYPOINT")).split(" ", 1)[1])
    arguments = json.loads(next(line for line in lines if line.startswith("CMD")).split(" ", 1)[1])
    assert entrypoint == ["loadmaster", "server"]
    assert {word for word in arguments if word.startswith("--")} <= server_options()
