"""What a kubectl user reaches for first: --version, shell completion, contexts in a config file,
``-o name``, ``--no-headers`` and ``delete -f``; typer's runner against a real in-process server."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from loadmaster.cli.main import app
from loadmaster.runtime.plane.process.logging_setup import configure_logging
from tests.cli.in_process_server import InProcessServer

configure_logging()  # the in-process server's log lines go to stderr, not into the commands' stdout

OBJECTS = """\
api_version: loadmaster/v1
kind: Queue
metadata: {name: batch}
spec: {priority: 5}
---
api_version: loadmaster/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  services:
    - {name: api, image: "x:1", replicas: 1, queue: batch, resources: {cpu: 100m, memory: 64Mi}}
"""
NO_SERVER = "http://127.0.0.1:9"  # the discard port: nothing listens there


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    running = InProcessServer(tmp_path_factory.mktemp("basics")).start()
    try:
        yield running
    finally:
        running.close()


def run(*args: str, config: Path | None = None, **env: str | None) -> Result:
    """The CLI with a config file of the test's own (never the user's) and no connection variables."""
    environment = {"LOADMASTER_SERVER": None, "LOADMASTER_TOKEN": None, "LOADMASTER_CONTEXT": None, **env}
    environment["LOADMASTER_CONFIG"] = str(config) if config else "/nonexistent/loadmaster.yaml"
    return CliRunner().invoke(app, list(args), env=environment)


def connected(server: InProcessServer, *args: str) -> Result:
    return run(*args, "--server", server.url, "--token", server.token)


def test_version_prints_the_installed_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"loadmaster {version('loadmaster')} (Python ")


def test_bash_completion_completes_commands_and_options() -> None:
    def complete(words: str) -> list[str]:
        env = {**os.environ, "_LOADMASTER_COMPLETE": "complete_bash", "COMP_WORDS": words}
        env["COMP_CWORD"] = str(len(words.split()) - 1)
        command = [
            sys.executable,
            "-c",
            "import sys; sys.argv[0] = 'loadmaster'; from loadmaster.cli.main import main; main()",
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
        return done.stdout.split()

    assert complete("loadmaster ge") == ["get"]
    assert complete("loadmaster config use") == ["use-context"]
    assert "--no-headers" in complete("loadmaster get --no")
    assert "bash" in run("--show-completion", "bash").stdout


def test_get_o_name_prints_kind_slash_name_and_no_headers_drops_the_header(server: InProcessServer) -> None:
    applied = CliRunner().invoke(
        app,
        ["apply", "-f", "-", "--server", server.url, "--token", server.token],
        input=OBJECTS,
        env={"LOADMASTER_CONFIG": "/nonexistent/loadmaster.yaml"},
    )
    assert applied.exit_code == 0, applied.output
    assert connected(server, "get", "queues", "-o", "name").stdout == "queues/batch\n"
    with_headers = connected(server, "get", "deployments").stdout.splitlines()
    without = connected(server, "get", "deployments", "--no-headers").stdout.splitlines()
    assert with_headers[0].split()[0] == "NAME"
    assert [line.split()[0] for line in without] == ["web"]


def test_delete_f_deletes_every_object_in_the_file_last_first(
    server: InProcessServer, tmp_path: Path
) -> None:
    manifest = tmp_path / "objects.yaml"
    manifest.write_text(OBJECTS.replace("batch", "scratch").replace("web", "site"))
    assert connected(server, "apply", "-f", str(manifest)).exit_code == 0
    deleted = connected(server, "delete", "-f", str(manifest))
    assert deleted.exit_code == 0, deleted.output
    assert deleted.stdout == "deployments/site deleted\nqueues/scratch deleted\n"
    again = connected(server, "delete", "-f", str(manifest))
    assert again.exit_code == 1
    assert "deployments/site: " in again.stderr and "queues/scratch: " in again.stderr
    assert "2 of 2 object(s) could not be deleted" in again.stderr


def test_delete_needs_a_kind_and_name_or_a_file() -> None:
    assert run("delete", "deployments").exit_code == 2
    both = run("delete", "deployments", "web", "-f", "x.yaml")
    assert both.exit_code == 2 and "not both" in both.stderr


def test_a_context_supplies_server_and_token_until_a_flag_overrides_it(
    server: InProcessServer, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    token_file = tmp_path / "token"
    token_file.write_text(server.token + "\n")
    assert (
        run(
            "config",
            "set-context",
            "here",
            "--server",
            server.url,
            "--token-file",
            str(token_file),
            config=config,
        ).exit_code
        == 0
    )
    assert (
        run(
            "config", "set-context", "nowhere", "--server", NO_SERVER, "--token", "x", config=config
        ).exit_code
        == 0
    )
    assert oct(config.stat().st_mode & 0o777) == "0o600"  # it holds tokens
    switched = run("config", "use-context", "here", config=config)
    assert switched.exit_code == 0 and "switched to context here" in switched.stdout
    assert yaml.safe_load(config.read_text())["current_context"] == "here"
    assert run("get", "nodes", "-o", "json", config=config).exit_code == 0  # no --server, no --token
    assert run("config", "current-context", config=config).stdout == "here\n"
    listing = run("config", "get-contexts", config=config).stdout.splitlines()
    assert listing[1].split()[:2] == ["*", "here"] and listing[2].split()[0] == "nowhere"

    # LOADMASTER_CONTEXT picks another one for one command; a --server flag beats the context.
    elsewhere = run("get", "nodes", config=config, LOADMASTER_CONTEXT="nowhere")
    assert elsewhere.exit_code == 1 and NO_SERVER in elsewhere.stderr
    flagged = run(
        "get",
        "nodes",
        "-o",
        "json",
        "--server",
        server.url,
        "--token",
        server.token,
        config=config,
        LOADMASTER_CONTEXT="nowhere",
    )
    assert flagged.exit_code == 0, flagged.output


def test_an_unknown_context_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    run("config", "set-context", "a", "--server", NO_SERVER, config=config)
    refused = run("config", "use-context", "b", config=config)
    assert refused.exit_code == 2
    assert "no context named b" in refused.stderr and "known: a" in refused.stderr


def test_a_malformed_config_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("contexts: {a: {server: x, passwd: y}}\n")
    refused = run("get", "nodes", config=config)
    assert refused.exit_code == 2
    assert f"{config}: context a: unknown field(s) passwd" in refused.stderr


def test_get_queues_shows_live_fairness_and_describe_breaks_it_down(server: InProcessServer) -> None:
    applied = CliRunner().invoke(
        app,
        ["apply", "-f", "-", "--server", server.url, "--token", server.token],
        input=OBJECTS.replace("batch", "fair").replace("web", "fairweb"),
        env={"LOADMASTER_CONFIG": "/nonexistent/loadmaster.yaml"},
    )
    assert applied.exit_code == 0, applied.output
    table = connected(server, "get", "queues").stdout.splitlines()
    assert table[0].split() == [
        "NAME",
        "PARENT",
        "PRIORITY",
        "WEIGHT",
        "ALLOCATED",
        "DESERVED",
        "FAIR",
        "SHARE",
        "LIMIT",
        "DOMINANT",
        "AGE",
    ]
    row = next(line.split() for line in table if line.startswith("fair "))
    assert row[:4] == ["fair", "-", "5", "1"] and row[-2] in ("0.00", "1.00")
    described = connected(server, "describe", "queue", "fair")
    assert described.exit_code == 0, described.output
    assert "Fairness (live, at " in described.stdout
    assert "siblings:" in described.stdout and "last reclaim:       none recorded" in described.stdout
