"""Bad timeline files are refused before anything runs, with the YAML path of the field at fault."""

from __future__ import annotations

import pytest

from loadmaster.scenario.errors import ScenarioError
from loadmaster.timeline.schema import build_timeline

NODE = {"name": "n1", "capacity": {"cpu": 4, "memory": "8Gi"}}
DEPLOYMENT = {
    "api_version": "loadmaster/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {"services": [{"name": "api", "image": "web:1", "replicas": 1}]},
}


def timeline(**changes: object) -> dict[str, object]:
    document: dict[str, object] = {
        "name": "a-timeline",
        "nodes": [NODE],
        "timeline": [{"at": "1s", "expect": {"nodes": {"n1": {"state": "Ready"}}}}],
    }
    document.update(changes)
    return document


CASES = [
    pytest.param(timeline(colour="blue"), "colour", "unknown", id="unknown-top-level-key"),
    pytest.param(
        timeline(config={"heartbeat_interval": "fast"}),
        "config.heartbeat_interval",
        "duration",
        id="bad-duration",
    ),
    pytest.param(
        timeline(config={"node_status_interval": "1s"}),
        "config.node_status_interval",
        "5s",
        id="pressure-interval-out-of-range",
    ),
    pytest.param(
        timeline(config={"node_loss_policy": "some"}),
        "config.node_loss_policy",
        "single_replica",
        id="unknown-node-loss-policy",
    ),
    pytest.param(
        timeline(config={"search_backoff": {"consolidate_min": "soon"}}),
        "config.search_backoff.consolidate_min",
        "duration",
        id="bad-search-backoff-duration",
    ),
    pytest.param(
        timeline(config={"search_backoff": {"consolidate_min": -1}}),
        "config.search_backoff.consolidate_min",
        "negative duration",
        id="negative-search-backoff",
    ),
    pytest.param(
        timeline(config={"search_backoff": {"consolidate_minimum": "30s"}}),
        "config.search_backoff.consolidate_minimum",
        "unknown",
        id="unknown-search-backoff-key",
    ),
    pytest.param(
        timeline(timeline=[{"at": "10s", "do": {"node_down": "n1"}}, {"at": "5s", "expect": {}}]),
        "timeline[1].at",
        "time order",
        id="steps-out-of-order",
    ),
    pytest.param(
        timeline(timeline=[{"at": "1s", "do": {"explode": "n1"}}]),
        "timeline[0].do.explode",
        "unknown action",
        id="unknown-action",
    ),
    pytest.param(
        timeline(timeline=[{"at": "1s", "do": {"node_down": "n1", "node_up": "n1"}}]),
        "timeline[0].do",
        "one action",
        id="two-actions-in-one-step",
    ),
    pytest.param(
        timeline(timeline=[{"at": "1s", "do": {"node_down": "n1"}, "expect": {}}]),
        "timeline[0]",
        "either",
        id="do-and-expect-together",
    ),
    pytest.param(
        timeline(
            timeline=[
                {
                    "at": "1s",
                    "do": {
                        "apply": [
                            {
                                **DEPLOYMENT,
                                "spec": {"services": [{"name": "api", "image": "web:1", "replicas": -1}]},
                            }
                        ]
                    },
                }
            ]
        ),
        "timeline[0].do.apply[0].spec.services[0].replicas",
        "",
        id="manifest-the-api-would-refuse",
    ),
    pytest.param(
        timeline(resources=[{**DEPLOYMENT, "kind": "Deploymint"}]),
        "resources[0].kind",
        "Deploymint",
        id="unknown-kind-in-resources",
    ),
    pytest.param(
        timeline(nodes=[{**NODE, "state": "NotReady"}]), "nodes[0].state", "no state", id="node-with-a-state"
    ),
    pytest.param(timeline(nodes=[NODE, NODE]), "nodes[1].name", "duplicate", id="duplicate-node"),
    pytest.param(
        timeline(timeline=[{"at": "1s", "expect": {"replicas": {"web-api-0": {"colour": "x"}}}}]),
        "timeline[0].expect.replicas.web-api-0.colour",
        "unknown field",
        id="unknown-expected-replica-field",
    ),
    pytest.param(
        timeline(timeline=[{"at": "1s", "do": {"delete": {"kind": "Gadget", "name": "x"}}}]),
        "timeline[0].do.delete.kind",
        "Gadget",
        id="delete-of-an-unknown-kind",
    ),
    pytest.param(timeline(name="Not Kebab"), "name", "kebab", id="name-not-kebab-case"),
    pytest.param(
        timeline(timeline=[{"at": "1s", "do": {"replica": {"name": "web-api-0", "health": "poor"}}}]),
        "timeline[0].do.replica.health",
        "failing",
        id="replica-health-neither-failing-nor-passing",
    ),
    pytest.param(
        timeline(
            timeline=[{"at": "1s", "do": {"replica": {"name": "web-api-0", "exit": 1, "health": "failing"}}}]
        ),
        "timeline[0].do.replica",
        "one thing",
        id="replica-told-two-things-at-once",
    ),
    pytest.param(
        timeline(timeline=[{"at": "1s", "do": {"image": {"name": "web:1", "pull": "maybe"}}}]),
        "timeline[0].do.image.pull",
        "fails",
        id="image-pull-neither-fails-nor-succeeds",
    ),
    pytest.param(
        timeline(timeline=[{"at": "1s", "do": {"image": {"name": "web:1", "start_delay": "soon"}}}]),
        "timeline[0].do.image.start_delay",
        "duration",
        id="image-start-delay-not-a-duration",
    ),
]


@pytest.mark.parametrize(("document", "path", "words"), CASES)
def test_a_bad_timeline_is_refused_naming_the_field(document: object, path: str, words: str) -> None:
    with pytest.raises(ScenarioError) as refused:
        build_timeline(document)
    assert refused.value.path == path
    assert words in refused.value.message


def test_a_setting_of_a_rule_not_built_yet_is_accepted_at_its_default() -> None:
    document = timeline(
        config={"node_loss_policy": "single_replica", "restart_budget": 3, "drain_timeout": "5m"}
    )
    assert build_timeline(document).config.restart_budget == 3
