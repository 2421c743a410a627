"""Bad input through the CLI against a real server: a clear message naming the field path, a non-zero
exit, and nothing stored. Each manifest case runs twice: refused by the CLI's own check (exit 2, nothing
sent) and, with --no-validate, refused by the server (422, exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from loadmaster.cli.main import app
from tests.e2e.conftest import Cluster, write
from tests.e2e.processes import free_port

GOOD_QUEUE = "api_version: loadmaster/v1\nkind: Queue\nmetadata: {name: fine}\nspec: {priority: 1}\n"


def deployment(name: str = "bad", resources: str = "{cpu: 500m, memory: 256Mi}", extra: str = "") -> str:
    return (
        f"api_version: loadmaster/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  services:\n"
        f"    - {{name: api, image: x, replicas: 2, resources: {resources}{extra}}}\n"
    )


BAD_MANIFESTS = [
    pytest.param(deployment() + "  oops: [\n", "malformed YAML", id="malformed-yaml"),
    pytest.param(
        deployment().replace("Deployment", "Deploymint"), 'unknown kind "Deploymint"', id="unknown-kind"
    ),
    pytest.param(
        deployment(extra=", replica: 3"), "spec.services[0].replica: unknown field", id="unknown-field"
    ),
    pytest.param(
        deployment(resources="{cpu: -1}"), "spec.services[0].resources.cpu", id="negative-resources"
    ),
    pytest.param(
        deployment(resources="{memory: 12 bananas}"),
        "spec.services[0].resources.memory",
        id="unparseable-resources",
    ),
    pytest.param(deployment(name="Bad_Name"), "metadata.name", id="name-not-dns-safe"),
]


def stored(cluster: Cluster) -> dict[str, set[str]]:
    """The names of every object of the kinds a bad apply could have touched."""
    with cluster.server.client() as client:
        return {
            kind: {
                item["metadata"]["name"]
                for item in client.get(f"/api/{kind}").raise_for_status().json()["items"]
            }
            for kind in ("queues", "deployments", "jobs", "replicas")
        }


@pytest.mark.parametrize(
    "validate", [pytest.param(True, id="cli-check"), pytest.param(False, id="server-check")]
)
@pytest.mark.parametrize(("document", "expected"), BAD_MANIFESTS)
def test_a_bad_manifest_is_refused_with_its_path_and_nothing_is_stored(
    cluster: Cluster, tmp_path: Path, document: str, expected: str, validate: bool
) -> None:
    # A good document next to the bad one: all or nothing, so it must not be stored either.
    path = write(tmp_path / "bad.yaml", GOOD_QUEUE + "---\n" + document)
    before = stored(cluster)
    result = cluster.cli("apply", "-f", str(path), *([] if validate else ["--no-validate"]))
    assert result.exit_code == (2 if validate else 1), result.output
    assert result.stderr.startswith("error: ")
    assert expected in result.stderr
    assert stored(cluster) == before
    assert "fine" not in stored(cluster)["queues"]


def test_a_wrong_token_is_refused_with_401_and_says_how_to_pass_one(cluster: Cluster) -> None:
    result = cluster.cli("get", "nodes", token="not-a-real-token")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: not authorized by {cluster.server.url}: ")
    assert "--token" in result.stderr


def test_a_missing_token_is_refused_with_401(cluster: Cluster, tmp_path: Path) -> None:
    # No --token, no LOADMASTER_TOKEN, and a data dir without an admin token: nothing is sent as a token.
    args = ["get", "nodes", "--server", cluster.server.url, "--data-dir", str(tmp_path)]
    result = CliRunner().invoke(app, args, env={"LOADMASTER_TOKEN": None, "LOADMASTER_SERVER": None})
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: not authorized by {cluster.server.url}: ")


def test_a_token_without_the_role_is_refused_with_403_and_changes_nothing(cluster: Cluster) -> None:
    created = cluster.cli("token", "create", "--role", "user", "-q")
    assert created.exit_code == 0, created.output
    user_token = created.stdout.strip()
    result = cluster.cli("cordon", "e2e-01", token=user_token)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: forbidden: ")
    with cluster.server.client() as client:
        assert client.get("/api/nodes/e2e-01").json()["spec"]["unschedulable"] is False
    # The same token may read workloads: the role is what was refused, not the token.
    assert cluster.cli("get", "deployments", token=user_token).exit_code == 0


def test_a_body_over_the_size_limit_is_refused_with_413_and_nothing_is_stored(
    cluster: Cluster, tmp_path: Path
) -> None:
    huge = "x" * (9 * 1024 * 1024)
    document = (
        f"api_version: loadmaster/v1\nkind: Queue\nmetadata:\n  name: huge\n  labels: {{blob: {huge}}}\n"
    )
    before = stored(cluster)
    result = cluster.cli("apply", "-f", str(write(tmp_path / "huge.yaml", document)))
    assert result.exit_code == 1, result.output
    assert "size limit" in result.stderr
    assert stored(cluster) == before


def test_an_unknown_kind_or_bad_name_on_the_command_line_exits_2_before_any_request(cluster: Cluster) -> None:
    unknown = cluster.cli("get", "widgets")
    assert (unknown.exit_code, unknown.stderr.startswith('error: unknown kind "widgets"')) == (2, True)
    bad_name = cluster.cli("describe", "nodes", "../etc")
    assert bad_name.exit_code == 2
    assert "NAME:" in bad_name.stderr and "not DNS-safe" in bad_name.stderr


def test_an_unreachable_server_is_one_line_saying_what_to_start(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = CliRunner().invoke(app, ["get", "nodes", "--server", url, "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: cannot reach the loadmaster server at {url}: connection refused; "
        "is `loadmaster server` running?\n"
    )
