"""Every client command through typer's runner against a real in-process server: output formats, tables,
describe pages, explanations, status, audit, tokens, and the errors the server returns."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner, Result

from loadmaster.cli.main import app
from tests.cli.in_process_server import InProcessServer
from tests.e2e.processes import wait_for

WORKLOADS = """\
api_version: loadmaster/v1
kind: Queue
metadata: {name: team, labels: {tier: gold}}
spec: {priority: 5}
---
api_version: loadmaster/v1
kind: Deployment
metadata: {name: shop, labels: {app: shop}}
spec:
  services:
    - {name: api, image: "x:1", replicas: 2, resources: {cpu: 500m, memory: 256Mi}}
---
api_version: loadmaster/v1
kind: Job
metadata: {name: big}
spec: {tasks: 1, command: [x], resources: {cpu: "64"}}
"""
KINDS = ["nodes", "queues", "deployments", "jobs", "workertemplates", "replicas"]


class Live:
    def __init__(self, server: InProcessServer) -> None:
        self.server = server

    def cli(self, *args: str, token: str | None = None, stdin: str | None = None) -> Result:
        options = ["--server", self.server.url, "--token", token or self.server.token]
        return CliRunner().invoke(app, [*args, *options], input=stdin, env={"LOADMASTER_TOKEN": None})

    def api(self, method: str, path: str, body: Any = None) -> Any:
        headers = {"Authorization": f"Bearer {self.server.token}"}
        response = httpx.request(method, f"{self.server.url}{path}", json=body, headers=headers, timeout=30)
        return response.raise_for_status().json()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    server = InProcessServer(tmp_path_factory.mktemp("in-process")).start()
    try:
        cluster = Live(server)
        for name in ("n1", "n2"):
            body = {
                "name": name,
                "labels": {"zone": name},
                "capacity": {"cpu": "4", "memory": "8Gi"},
                "system_reserved": {},
                "taints": [],
                "network": {},
            }
            cluster.api("POST", "/api/nodes/register", body)
        assert cluster.cli("apply", "-f", "-", stdin=WORKLOADS).exit_code == 0
        wait_for(
            lambda: scheduled(cluster) == {"shop-api-0", "shop-api-1"}, "the shop's replicas scheduled", 20
        )
        yield cluster
    finally:
        server.close()


def scheduled(live: Live) -> set[str]:
    items = live.api("GET", "/api/replicas")["items"]
    return {r["metadata"]["name"] for r in items if r.get("status", {}).get("phase") == "Scheduled"}


@pytest.mark.parametrize("kind", KINDS)
def test_get_prints_items_as_json_and_yaml_and_a_table_with_a_header(live: Live, kind: str) -> None:
    as_json = live.cli("get", kind, "-o", "json")
    assert as_json.exit_code == 0, as_json.output
    items = json.loads(as_json.stdout)["items"]
    assert yaml.safe_load(live.cli("get", kind, "-o", "yaml").stdout) == {"items": items}
    table = live.cli("get", kind, "-o", "wide")
    assert table.exit_code == 0, table.output
    if items:
        assert table.stdout.split()[0] == "NAME"
        assert {item["metadata"]["name"] for item in items} <= {
            line.split()[0] for line in table.stdout.splitlines()
        }
    else:
        assert table.stderr == f"no {kind} found\n"


def test_get_one_object_prints_the_object_itself_and_any_kind_spelling_works(live: Live) -> None:
    shown = json.loads(live.cli("get", "Deployment", "shop", "-o", "json").stdout)
    assert shown == live.api("GET", "/api/deployments/shop")
    assert (
        live.cli("get", "deployment", "shop", "-o", "json").stdout
        == live.cli("get", "DEPLOYMENTS", "shop", "-o", "json").stdout
    )


def test_get_with_a_selector_shows_only_matching_objects(live: Live) -> None:
    matching = json.loads(live.cli("get", "nodes", "-l", "zone=n2", "-o", "json").stdout)["items"]
    assert [node["metadata"]["name"] for node in matching] == ["n2"]


def test_the_nodes_table_sums_the_scheduled_replicas_on_each_node(live: Live) -> None:
    replicas = live.api("GET", "/api/replicas")["items"]
    per_node: dict[str, int] = {}
    for replica in replicas:
        if replica.get("status", {}).get("phase") == "Scheduled":
            per_node[replica["status"]["node_ref"]] = per_node.get(replica["status"]["node_ref"], 0) + 500
    rows = {line.split()[0]: line.split() for line in live.cli("get", "nodes").stdout.splitlines()[2:]}
    for node in ("n1", "n2"):
        used = per_node.get(node, 0) / 1000
        assert rows[node][3] == f"{used:g}/4", rows[node]


def test_describe_a_pending_replica_shows_its_conditions_and_explanation(live: Live) -> None:
    wait_for(
        lambda: live.api("GET", "/api/replicas/big-0").get("status", {}).get("conditions"),
        "a Phase condition",
    )
    page = live.cli("describe", "replicas", "big-0")
    assert page.exit_code == 0, page.output
    text = page.stdout
    for expected in (
        "Name:       big-0",
        "Kind:       Replica",
        "State:      Pending: PENDING (LRS), set by the scheduler, which keeps it waiting",
        "Conditions:",
        "Phase",
        "Explanation:",
        "replica big-0 is Pending",
        "every node's reasons:",
        "insufficient cpu",
    ):
        assert expected in text, expected


def test_describe_a_deployment_lists_its_replicas(live: Live) -> None:
    page = live.cli("describe", "deployments", "shop").stdout
    assert "Replicas (2):" in page
    assert "shop-api-0" in page and "shop-api-1" in page


def test_why_prints_the_servers_explanation_as_json_or_naming_every_node(live: Live) -> None:
    as_json = json.loads(live.cli("why", "big-0", "-o", "json").stdout)
    # docs/api.md's fields, as the server sent them (the server may add more).
    assert {"replica", "phase", "node_ref", "summary", "nodes", "hints", "reason", "attempts"} <= set(as_json)
    assert (as_json["replica"], as_json["phase"], as_json["node_ref"]) == ("big-0", "Pending", None)
    text = live.cli("why", "big-0").stdout
    assert "replica big-0 is Pending" in text
    for node in ("n1", "n2"):
        assert any(line.split()[:1] == [node] and "insufficient cpu" in line for line in text.splitlines())


def test_preview_changes_nothing_and_shows_a_candidate_table(live: Live, tmp_path: Path) -> None:
    before = live.api("GET", "/api/deployments")["items"]
    manifest = tmp_path / "extra.yaml"
    manifest.write_text(WORKLOADS.split("---\n")[1].replace("shop", "extra"))
    shown = live.cli("preview", "-f", str(manifest))
    assert shown.exit_code == 0, shown.output
    assert "replica extra-api-0 would go to node" in shown.stdout
    assert "RANK" in shown.stdout
    assert live.api("GET", "/api/deployments")["items"] == before


def test_status_shows_the_leader_nodes_and_replicas_by_phase(live: Live) -> None:
    text = live.cli("status").stdout
    assert "leader: " in text and "(this server)" in text
    assert "nodes: 2/2 ready" in text
    assert "Pending 1" in text and "Scheduled 2" in text
    assert any(line.split()[:1] == ["big-0"] for line in text.splitlines())


def test_audit_filters_by_type_and_prints_json(live: Live) -> None:
    entries = json.loads(live.cli("audit", "--type", "apply", "-o", "json").stdout)["items"]
    assert entries and {entry["type"] for entry in entries} == {"apply"}
    assert {entry["object"] for entry in entries} >= {"queues/team", "deployments/shop", "jobs/big"}
    table = live.cli("audit", "--type", "apply").stdout
    assert table.split()[:6] == ["SEQ", "TIME", "TYPE", "ACTOR", "OBJECT", "MESSAGE"]


def test_audit_takes_a_comma_separated_list_of_types(live: Live) -> None:
    # As `loadmaster audit -f --type rebalance_moved,rebalance_skipped` tails the rebalancer (H7).
    entries = json.loads(live.cli("audit", "--type", "apply, register", "-o", "json").stdout)["items"]
    assert {entry["type"] for entry in entries} == {"apply", "register"}


def test_an_agent_token_is_created_bound_to_a_node_unless_any_node_is_said(live: Live) -> None:
    unbound = live.cli("token", "create", "--role", "agent")
    assert unbound.exit_code != 0 and "--node" in unbound.output
    bound = live.cli("token", "create", "--role", "agent", "--node", "n1")
    assert bound.exit_code == 0 and "bound to nodes/n1" in bound.stderr
    anywhere = live.cli("token", "create", "--role", "agent", "--any-node")
    assert anywhere.exit_code == 0, anywhere.output
    both = live.cli("token", "create", "--role", "agent", "--node", "n1", "--any-node")
    assert both.exit_code != 0


def test_a_created_token_works_and_its_role_limits_it(live: Live) -> None:
    created = live.cli("token", "create", "--role", "agent", "--node", "n1")
    assert created.exit_code == 0, created.output
    token = created.stdout.strip()
    assert "shown once" in created.stderr
    refused = live.cli("get", "deployments", token=token)
    assert refused.exit_code == 1
    assert refused.stderr.startswith("error: forbidden: ")


def test_deleting_what_does_not_exist_is_one_line_from_the_server(live: Live) -> None:
    missing = live.cli("delete", "deployments", "nope")
    assert missing.exit_code == 1
    assert missing.stderr.startswith("error: ") and "nope" in missing.stderr
    assert missing.stderr.count("\n") == 1
