"""docs/metrics.md lists exactly what a real server's ``GET /metrics`` exports (HTTP on 127.0.0.1): every
exported family is listed with its type and labels, and every listed one is exported."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from tests.api.conftest import Api, deployment, open_api

pytestmark = pytest.mark.anyio
PAGE = Path(__file__).parents[2] / "docs" / "metrics.md"
ROW = re.compile(
    r"^\| `(?P<name>loadmaster_\w+)` \| (?P<type>\w+) \|(?P<labels>[^|]*)\| [^|]+ \| (?P<when>[^|]+) \|$"
)
# Labels the exposition adds to a histogram's series, not the metric's own.
EXPOSITION_LABELS = frozenset({"le"})


@dataclass(frozen=True)
class Listed:
    type: str
    labels: frozenset[str]
    always: bool  # a sample from the start (no labels), rather than from the first event


def listed_metrics() -> dict[str, Listed]:
    """The page's table by family name (a counter's ``_total`` dropped, as the exposition's parser does)."""
    listed = {}
    for line in PAGE.read_text().splitlines():
        row = ROW.match(line)
        if row is None:
            continue
        kind, name = row["type"], row["name"]
        family = name.removesuffix("_total") if kind == "counter" else name
        assert family not in listed, f"{name} is listed twice"
        labels = frozenset(label.strip(" `") for label in row["labels"].split(",") if label.strip())
        listed[family] = Listed(kind, labels, row["when"].strip() == "start")
    return listed


def test_the_page_lists_counters_by_their_exported_total_name() -> None:
    for line in PAGE.read_text().splitlines():
        row = ROW.match(line)
        if row is not None and row["type"] == "counter":
            assert row["name"].endswith("_total"), line


async def _drive(api: Api) -> None:
    """Binds on two nodes, a replica that fits nowhere (a wait, a failure, a retry), and cycles."""
    await api.register("n1", cpu="2")
    await api.register("n2", cpu="2")
    await api.apply(deployment(name="shop", replicas=2, cpu="1", extra="placement: spread"))
    await api.apply(deployment(name="huge", replicas=1, cpu="8"))
    phases = {"shop-api-0": "Scheduled", "shop-api-1": "Scheduled", "huge-api-0": "Pending"}
    placed = await api.wait_phases(phases)
    assert {placed[name]["status"]["node_ref"] for name in ("shop-api-0", "shop-api-1")} == {"n1", "n2"}

    async def waited() -> bool:
        text = (await api.anonymous.get("/metrics")).text
        return 'loadmaster_decisions_total{action="wait"}' in text

    await api.wait_until(waited, "the unplaceable replica's wait decision")


def _families(text: str) -> dict[str, Metric]:
    """The scraped families by name. The text format writes a counter's or histogram's ``X_created`` as
    a gauge family of its own: it belongs to ``X`` (its creation time), not to the list."""
    families = {family.name: family for family in text_string_to_metric_families(text)}
    return {
        name: family
        for name, family in families.items()
        if not (
            name.endswith("_created")
            and family.type == "gauge"
            and families.get(name.removesuffix("_created"), family).type in ("counter", "histogram")
        )
    }


def _collectors(api: Api) -> dict[str, MetricWrapperBase]:
    """The server's metric objects by family name (ControlPlaneMetrics' attributes, and dicts of them)."""
    found: dict[str, MetricWrapperBase] = {}
    for value in vars(api.server.plane.metrics).values():
        for item in value.values() if isinstance(value, dict) else (value,):
            if isinstance(item, MetricWrapperBase):
                found[item.describe()[0].name] = item
    return found


def _has_labels(collector: MetricWrapperBase, labels: frozenset[str]) -> bool:
    """Whether the metric takes exactly ``labels``: ``labels()`` refuses any other set (the series made to
    ask is removed again)."""
    values: dict[str, Any] = {label: "page-check" for label in labels}
    try:
        collector.labels(**values)
    except ValueError:
        return False
    collector.remove(*(values[name] for name in sorted(values, key=list(labels).index)))
    return True


async def test_every_exported_metric_is_listed_and_every_listed_one_is_exported(tmp_path: Path) -> None:
    listed = listed_metrics()
    async with open_api(tmp_path, debounce_s=0.005) as api:
        await _drive(api)
        response = await api.anonymous.get("/metrics")
        assert response.status_code == 200
        exported = _families(response.text)
        assert sorted(set(exported) - set(listed)) == [], "exported but not in docs/metrics.md"
        assert sorted(set(listed) - set(exported)) == [], "in docs/metrics.md but not exported"
        collectors = _collectors(api)
        for name, family in exported.items():
            entry = listed[name]
            assert family.type == entry.type, name
            own = family.samples
            if entry.always:
                assert own, f"{name} is listed as sampled from the start but has no sample"
            if own:
                seen = {frozenset(set(s.labels) - EXPOSITION_LABELS) for s in own}
                assert seen == {entry.labels}, name
            else:  # no event has made a series yet: ask the server's registry
                assert _has_labels(collectors[name], entry.labels), name
        assert exported["loadmaster_successes"].samples, "binds counted per node"
        per_node = {
            s.labels["node"]: s.value
            for s in exported["loadmaster_successes"].samples
            if s.name.endswith("_total")
        }
        assert per_node == {"n1": 1.0, "n2": 1.0}
        fetches = {
            s.labels["success"]: s.value
            for s in exported["loadmaster_store_capacity_fetches"].samples
            if s.name.endswith("_total")
        }
        assert fetches["true"] >= 2  # each node's object read at least once (registration)
        assert "false" not in fetches
