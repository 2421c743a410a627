"""The apply-time image check reads the nodes only when a manifest has an image without a command."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from loadmaster.manifests import parse_manifests
from loadmaster.runtime.plane.errors import InvalidError
from loadmaster.runtime.requests.writes.runnable_images import check_images_runnable

WITH_COMMAND = """\
api_version: loadmaster/v1
kind: Job
metadata: {name: batch}
spec: {tasks: 1, command: ["true"], resources: {cpu: 10m, memory: 16Mi}}
"""
IMAGE_ONLY = """\
api_version: loadmaster/v1
kind: Deployment
metadata: {name: boxed}
spec:
  services:
    - {name: api, image: "registry.example/api:1", resources: {cpu: 100m, memory: 64Mi}}
"""
PROCESS_NODE = {"status": {"agent": {"driver": "process"}}}


class CountedNodes:
    """The cache's nodes as the check sees them, counting how often they were walked."""

    def __init__(self, nodes: list[Mapping[str, Any]]) -> None:
        self.nodes, self.walks = nodes, 0

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        self.walks += 1
        return iter(self.nodes)


def test_an_apply_of_commands_never_walks_the_nodes() -> None:
    nodes = CountedNodes([PROCESS_NODE] * 5000)
    check_images_runnable(parse_manifests(WITH_COMMAND), nodes)
    assert nodes.walks == 0


def test_an_image_only_template_is_still_refused_when_every_node_runs_processes() -> None:
    nodes = CountedNodes([PROCESS_NODE, PROCESS_NODE])
    with pytest.raises(InvalidError) as refused:
        check_images_runnable(parse_manifests(IMAGE_ONLY), nodes)
    assert [problem.path for problem in refused.value.problems] == ["spec.services[0].command"]
    assert nodes.walks == 1


@pytest.mark.parametrize(
    "nodes",
    [
        pytest.param([], id="no-node-yet"),
        pytest.param([PROCESS_NODE, {"status": {}}], id="a-simulated-node-runs-images"),
    ],
)
def test_an_image_only_template_is_accepted_where_a_node_may_run_it(nodes: list[Mapping[str, Any]]) -> None:
    check_images_runnable(parse_manifests(IMAGE_ONLY), CountedNodes(nodes))
